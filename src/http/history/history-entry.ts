import type { HttpContext } from '../../core/requests/request-state';
import { applyPrivacyToContext, isPrivateParam, type PrivacyPlan } from '../../core/records/privacy';
import { redactQueryString } from '../../core/redact';
import type { RequestEntry } from '../../core/requests/request-history';
import { ERROR_HEADER } from '../error-handler';

/** Each text's own bound, before the entry as a whole is fitted to its size. */
const TEXT_CAPS = { path: 200, query: 300, message: 300, userAgent: 200 } as const;

/** The texts that give way, longest first, when an entry is still over its size. */
const SHRINKABLE = ['query', 'userAgent', 'message', 'path', 'endpoint'] as const;

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

interface ErrorAnswer {
  error?: { code?: unknown; message?: unknown };
  rejected?: unknown;
  results?: Array<{ error?: { code?: unknown; message?: unknown } }>;
  /** `/v1` (Segment) lists only its rejected messages. */
  errors?: Array<{ code?: unknown; message?: unknown }>;
}

/** The code and message of a refusal, or of the first refused record of a batch answered 2xx. */
function reasonOf(ctx: HttpContext): { code?: string; message?: string; rejected?: number } {
  const body = (Buffer.isBuffer(ctx.body) ? undefined : ctx.body) as ErrorAnswer | null | undefined;
  const header = ctx.response.get(ERROR_HEADER);
  const stateMessage = ctx.state.errorMessage;
  if (body && typeof body === 'object' && body.error) {
    return { code: String(body.error.code), message: String(body.error.message), ...(typeof body.rejected === 'number' && body.rejected > 0 ? { rejected: body.rejected } : {}) };
  }
  if (header) return stateMessage === undefined ? { code: header } : { code: header, message: stateMessage };
  if (body && typeof body === 'object' && typeof body.rejected === 'number' && body.rejected > 0) {
    const first = body.results?.find((r) => r.error)?.error ?? body.errors?.[0];
    return { rejected: body.rejected, ...(first ? { code: String(first.code), message: String(first.message) } : {}) };
  }
  return {};
}

function bodyBytes(ctx: HttpContext): number {
  const declared = Number(ctx.get('content-length'));
  if (Number.isFinite(declared) && declared > 0) return declared;
  return ctx.state.bodyBytes ?? 0;
}

let isoMs = 0;
let isoText = '';

/** Formatting a Date costs more than the clock read, and at load most requests share their millisecond. */
function isoNow(): string {
  const ms = Date.now();
  if (ms !== isoMs) {
    isoMs = ms;
    isoText = new Date(ms).toISOString();
  }
  return isoText;
}

/**
 * What the tracker's personal-data rules keep out of storage, kept out of its history too: the URL
 * parameters they name (and `data=`) shown as `[redacted]`, the client IP as the `_ip` rule says.
 */
export function protectEntry(entry: RequestEntry, plan: PrivacyPlan): void {
  if (entry.query) {
    entry.query = entry.query
      .split('&')
      .map((part) => {
        const eq = part.indexOf('=');
        const name = eq < 0 ? part : part.slice(0, eq);
        let decoded = name;
        try {
          decoded = decodeURIComponent(name.replace(/\+/g, ' '));
        } catch {
          // A malformed escape: judged by its raw name.
        }
        return isPrivateParam(plan, decoded) ? `${name}=[redacted]` : part;
      })
      .join('&');
  }
  const context: { ip?: string } = { ip: entry.ip };
  applyPrivacyToContext(context, plan);
  entry.ip = context.ip ?? '[redacted]';
}

/** Reads a finished v3 request. Never the body, never a token: see src/core/redact.ts. */
export function buildRequestEntry(ctx: HttpContext): RequestEntry {
  const records = ctx.state.liveRecords?.length ?? 0;
  const duplicates = ctx.state.liveDuplicates ?? 0;
  const query = redactQueryString(ctx.querystring);
  const userAgent = ctx.get('user-agent');
  const entry: RequestEntry = {
    at: isoNow(),
    method: ctx.method,
    endpoint: (ctx as { _matchedRoute?: string })._matchedRoute ?? ctx.path,
    path: cut(ctx.path, TEXT_CAPS.path),
    status: ctx.status,
    bytes: bodyBytes(ctx),
    records,
    ip: ctx.ip,
  };
  if (query) entry.query = cut(query, TEXT_CAPS.query);
  const { code, message, rejected } = reasonOf(ctx);
  if (code !== undefined) entry.code = code;
  if (message !== undefined) entry.message = cut(message, TEXT_CAPS.message);
  if (rejected !== undefined) entry.rejected = rejected;
  if (duplicates > 0) entry.duplicates = duplicates;
  if (userAgent) entry.userAgent = cut(userAgent, TEXT_CAPS.userAgent);
  const privacy = ctx.state.privacy;
  if (privacy) protectEntry(entry, privacy);
  return entry;
}

/**
 * The entry as JSON of at most `maxBytes` UTF-8 bytes: the longest of its free texts is halved
 * until it fits. The other fields are short and bounded (a status, counts, an IP, a time), so an
 * entry always fits in the smallest size allowed (256).
 */
export function fitEntry(entry: RequestEntry, maxBytes: number): string {
  let json = JSON.stringify(entry);
  // A UTF-8 character takes at most 3 bytes per UTF-16 unit: most entries need no byte count.
  if (json.length * 3 <= maxBytes) return json;
  for (let round = 0; Buffer.byteLength(json) > maxBytes && round < 40; round++) {
    const longest = SHRINKABLE.filter((k) => entry[k] !== undefined).sort((a, b) => entry[b]!.length - entry[a]!.length)[0];
    if (longest === undefined || entry[longest]!.length <= 1) break;
    entry[longest] = cut(entry[longest]!, Math.floor(entry[longest]!.length / 2));
    json = JSON.stringify(entry);
  }
  return json;
}
