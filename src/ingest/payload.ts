import type { Limits } from '../core/config';
import { ApiError, recordError, type RecordError } from '../core/errors';
import { decodeBase64Json } from './base64-json';
import { nullProtoObject } from '../core/records/types';

/** URL parameters or form fields: a repeated name arrives as an array of strings. */
export type FlatParams = Record<string, string | string[] | undefined>;

export type ParsedBody =
  | { kind: 'none' }
  | { kind: 'json'; value: unknown }
  | { kind: 'form'; value: FlatParams };

export interface RequestParts {
  query: FlatParams;
  body: ParsedBody;
  authorization: string | undefined;
}

export type PayloadItem = { fields: Record<string, unknown> } | { error: RecordError };

export interface ExtractedPayload {
  /** One entry per record: the merged raw fields, or the reason the entry is not a record. */
  items: PayloadItem[];
  /** True when the client sent an array, so the answer lists one result per record. */
  batch: boolean;
  /** The token, after checking that every form that carried one carried the same. */
  token: string | undefined;
}

/**
 * The URL parameters the interface reads itself; every other one is a field of the record. The
 * OpenAPI document (src/http/openapi) names these, and its test holds the two lists together.
 */
export const URL_PARAMETERS = { token: '_token', data: 'data' } as const;

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Name → string, or string[] when the name repeats. Null-prototype, so any name is plain data.
 * URLSearchParams rather than Node's querystring, which silently keeps only the first 1000 pairs.
 */
export function flatParams(params: URLSearchParams): FlatParams {
  const out = nullProtoObject<FlatParams>();
  for (const [k, v] of params) {
    const prev = out[k];
    // push, not spread: a 5 MiB form body of `a=&a=&…` must stay linear.
    if (prev === undefined) out[k] = v;
    else if (Array.isArray(prev)) prev.push(v);
    else out[k] = [prev, v];
  }
  return out;
}

/** Copies own keys onto a null-prototype object, so `__proto__` and `constructor` stay plain data. */
function overlay(base: Record<string, unknown>, top: Record<string, unknown>): Record<string, unknown> {
  const out = nullProtoObject<Record<string, unknown>>();
  for (const k of Object.keys(base)) out[k] = base[k];
  for (const k of Object.keys(top)) out[k] = top[k];
  return out;
}

/** The token of an `Authorization: Tracker <token>` header; undefined for none or another scheme. */
export function headerToken(authorization: string | undefined): string | undefined {
  if (!authorization) return undefined;
  // Other schemes (Basic, Bearer…) belong to the sender, e.g. a webhook's own signature: not ours to judge.
  if (!/^Tracker(\s|$)/i.test(authorization)) return undefined;
  const m = /^Tracker\s+(\S+)\s*$/i.exec(authorization);
  // Our scheme with a missing or split credential is a broken token, not an absent one.
  if (!m) throw new ApiError('ERR_INVALID_TOKEN', 'The Authorization header must be "Tracker <token>".');
  return m[1];
}

function takeToken(fields: Record<string, unknown>, where: string, seen: Set<string>): void {
  const t = fields._token;
  if (t === undefined) return;
  // A repeated URL or form parameter arrives as an array: each value counts, so two different ones conflict.
  const values = Array.isArray(t) ? t : [t];
  for (const v of values) {
    if (typeof v !== 'string' || v.length === 0) throw new ApiError('ERR_INVALID_TOKEN', `_token in the ${where} must be a non-empty string.`, '_token');
    seen.add(v);
  }
  if (values.length === 0) throw new ApiError('ERR_INVALID_TOKEN', `_token in the ${where} must be a non-empty string.`, '_token');
}

/** What arrived instead of a record, and what to send: a JSON string holding JSON was encoded twice. */
function notARecord(value: unknown, where: string): string {
  if (typeof value === 'string' && /^\s*[[{]/.test(value)) {
    return `The ${where} is a JSON string that holds JSON (encoded twice, e.g. JSON.stringify of a string): send the object itself, e.g. {"_event":"signup"}.`;
  }
  const what = value === null ? 'null' : typeof value === 'string' ? 'a string' : `a ${typeof value}`;
  return `The ${where} is JSON ${what}, not a record: send a JSON object such as {"_event":"signup"}, or an array of them.`;
}

/**
 * Turns the parts of a request into raw records. URL parameters are the base and the encoded
 * payload (POST body, else `data=`) overlays them; `data=` alongside a body overlays the base too.
 * Token precedence is header, body, query — and two different tokens are refused, never picked from.
 */
export function extractPayload(parts: RequestParts, limits: Limits): ExtractedPayload {
  let base = nullProtoObject<Record<string, unknown>>();
  for (const k of Object.keys(parts.query)) {
    if (k !== URL_PARAMETERS.data) base[k] = parts.query[k];
  }
  const tokens = new Set<string>();
  const header = headerToken(parts.authorization);
  if (header) tokens.add(header);
  if (base._token !== undefined) {
    takeToken(base, 'query', tokens);
    delete base._token;
  }

  let payload: unknown;
  const rawData = parts.query[URL_PARAMETERS.data];
  if (rawData !== undefined) {
    if (Array.isArray(rawData)) throw new ApiError('ERR_INVALID_FIELD', 'Send the data parameter once.', 'data');
    payload = decodeBase64Json(rawData);
  }
  if (parts.body.kind === 'json' || parts.body.kind === 'form') {
    if (payload !== undefined) {
      if (!isPlainObject(payload)) throw new ApiError('ERR_INVALID_PAYLOAD', 'With a request body, the data parameter must hold a JSON object.', 'data');
      takeToken(payload, 'data parameter', tokens);
      base = overlay(base, payload);
      delete base._token;
    }
    payload = parts.body.value;
  }

  let batch = false;
  let entries: unknown[];
  if (payload === undefined) entries = [nullProtoObject()];
  else if (Array.isArray(payload)) {
    batch = true;
    if (payload.length === 0) throw new ApiError('ERR_EMPTY_BATCH');
    if (payload.length > limits.recordsPerRequest) throw new ApiError('ERR_TOO_MANY_RECORDS', `At most ${limits.recordsPerRequest} records per request.`);
    entries = payload;
  } else if (isPlainObject(payload)) entries = [payload];
  else throw new ApiError('ERR_INVALID_PAYLOAD', notARecord(payload, parts.body.kind === 'none' ? 'data parameter' : 'body'));

  const items = entries.map((entry): PayloadItem => {
    if (!isPlainObject(entry)) return { error: recordError('ERR_INVALID_PAYLOAD', undefined, 'Each array element must be a JSON object.') };
    takeToken(entry, 'body', tokens);
    const fields = overlay(base, entry);
    delete fields._token;
    return { fields };
  });

  if (tokens.size > 1) throw new ApiError('ERR_TOKEN_CONFLICT');
  const [token] = tokens;
  return { items, batch, token };
}
