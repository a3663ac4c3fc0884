import { ApiError } from '../../core/errors';
import { headerToken } from '../payload';

/**
 * The write key of an `Authorization: Basic base64("<key>:")` header: Segment's server libraries,
 * analytics-next ≥ 1.84 and RudderStack's SDKs put the key as the user name with an empty password
 * (the colon is optional). Undefined for no header or another scheme: OAuth's `Bearer` comes with
 * the key in the body, and `Tracker <token>` (v3's scheme) is read by `headerToken`.
 */
export function basicWriteKey(authorization: string | undefined): string | undefined {
  if (!authorization || !/^Basic(\s|$)/i.test(authorization)) return undefined;
  const m = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(authorization);
  if (!m) throw new ApiError('ERR_INVALID_TOKEN', 'The Authorization header must be "Basic <base64 of writeKey:>".');
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const key = colon === -1 ? decoded : decoded.slice(0, colon);
  if (key.length === 0) throw new ApiError('ERR_INVALID_TOKEN', 'The Basic credentials carry an empty write key: send the write key as the user name.');
  return key;
}

function bodyKey(value: unknown, where: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || value.length === 0) throw new ApiError('ERR_INVALID_TOKEN', `writeKey ${where} must be a non-empty string.`, 'writeKey');
  return value;
}

/**
 * The write key of a Segment request, in the order the SDKs are read: the Authorization header
 * (Basic, or v3's `Tracker`), else `writeKey` at the body's root (analytics-python, Swift, Kotlin),
 * else on the first message (analytics-next puts it on every event). A header and a root key
 * that differ are refused, as v3 refuses two tokens; a message naming another key is refused on
 * its own (see `messageKeyConflict`).
 */
export function segmentWriteKey(authorization: string | undefined, root: Record<string, unknown>, first: unknown): string | undefined {
  const header = basicWriteKey(authorization) ?? headerToken(authorization);
  const inBody = bodyKey(root.writeKey, 'at the body’s root');
  if (header !== undefined && inBody !== undefined && header !== inBody) throw new ApiError('ERR_TOKEN_CONFLICT', 'The Authorization header and the body’s writeKey name different write keys.');
  if (header ?? inBody) return header ?? inBody;
  if (typeof first === 'object' && first !== null && !Array.isArray(first)) {
    const key = (first as Record<string, unknown>).writeKey;
    return typeof key === 'string' && key.length > 0 ? key : undefined;
  }
  return undefined;
}

/** True when a message carries a writeKey other than the request's: it belongs to another tracker. */
export function messageKeyConflict(message: Record<string, unknown>, key: string): boolean {
  const own = message.writeKey;
  return typeof own === 'string' && own.length > 0 && own !== key;
}
