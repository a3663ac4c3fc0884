import type { HttpContext } from '../../core/requests/request-state';
import { ERROR_HEADER } from '../error-handler';
import type { FixedResponse } from '../../ingest/fixed-responses';
import { isPrivateParam, type PrivacyPlan } from '../../core/records/privacy';
import { RECORD_KINDS, type RecordKind, type TrackedRecord } from '../../core/records/types';

/** The most records one entry carries; a larger batch is cut, and `recordCount` says how many there were. */
export const LIVE_RECORDS_PER_ENTRY = 100;

/** What the console shows of one v3 request: what came in, what was stored, what the client got back. */
export interface LiveEntry {
  /** When the answer was sent. */
  at: string;
  kind: RecordKind | null;
  request: {
    method: string;
    path: string;
    /** URL parameters, `_token` shown as `[redacted]`. */
    query: Record<string, string>;
    contentType: string | null;
    origin: string | null;
    userAgent: string | null;
  };
  response: {
    status: number;
    /** The JSON answer; null for the pixel and the script, whose bodies are fixed. */
    body: unknown;
    fixed: FixedResponse | null;
    errorCode: string | null;
  };
  /** The records stored, as normalized. */
  records: TrackedRecord[];
  recordCount: number;
  /** Valid records whose client key was accepted before: answered, not queued again. */
  duplicates: number;
}

const KIND_IN_PATH = /^\/v3\/(user|session|event)(?:\/|$)/;
const FIXED_IN_PATH = /\/tracker\.(gif|js)\/?$/;

function kindOf(path: string): RecordKind | null {
  // A webhook delivery is stored as one event.
  if (path.startsWith('/v3/webhooks/')) return 'event';
  const kind = KIND_IN_PATH.exec(path)?.[1];
  return kind !== undefined && (RECORD_KINDS as readonly string[]).includes(kind) ? (kind as RecordKind) : null;
}

/** `_token`, and the parameters the tracker's personal-data rules change, are never shown raw. */
function redactedQuery(querystring: string, privacy: PrivacyPlan | undefined): Record<string, string> {
  const query: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(querystring)) query[name] = name === '_token' || (privacy && isPrivateParam(privacy, name)) ? '[redacted]' : value;
  return query;
}

/** For an entry built before its tracker was known: hides what that tracker's rules change. */
export function redactEntry(entry: LiveEntry, privacy: PrivacyPlan): void {
  for (const name of Object.keys(entry.request.query)) if (isPrivateParam(privacy, name)) entry.request.query[name] = '[redacted]';
}

function errorCodeOf(ctx: HttpContext): string | null {
  const header = ctx.response.get(ERROR_HEADER);
  if (header) return header;
  const body = ctx.body as { error?: { code?: unknown } } | null | undefined;
  const code = body && typeof body === 'object' && !Buffer.isBuffer(body) ? body.error?.code : undefined;
  return typeof code === 'string' ? code : null;
}

/** Reads a finished request; the records are the ones the route stored (none for a refusal). */
export function buildLiveEntry(ctx: HttpContext, records: readonly TrackedRecord[], duplicates = 0, privacy?: PrivacyPlan): LiveEntry {
  const fixed = (FIXED_IN_PATH.exec(ctx.path)?.[1] as FixedResponse | undefined) ?? null;
  return {
    at: new Date().toISOString(),
    kind: kindOf(ctx.path),
    request: {
      method: ctx.method,
      path: ctx.path,
      query: redactedQuery(ctx.querystring, privacy),
      contentType: ctx.get('content-type') || null,
      origin: ctx.get('origin') || null,
      userAgent: ctx.get('user-agent') || null,
    },
    response: {
      status: ctx.status,
      body: fixed || Buffer.isBuffer(ctx.body) ? null : (ctx.body ?? null),
      fixed,
      errorCode: errorCodeOf(ctx),
    },
    records: records.slice(0, LIVE_RECORDS_PER_ENTRY),
    recordCount: records.length,
    duplicates,
  };
}
