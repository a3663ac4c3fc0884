import type { RedisClient } from '../redis/cluster';

/**
 * One v3 request as its tracker's history keeps it: what the client sent (never the body, never a
 * token) and what it was answered. Texts are cut so that the whole entry fits the entry size.
 */
export interface RequestEntry {
  /** When the answer was sent (ISO 8601). */
  at: string;
  method: string;
  /** The route that answered (`/v3/event`, `/v3/webhooks/:tracker/:source`), or the path when none did. */
  endpoint: string;
  /** The path as requested. */
  path: string;
  /** The query string with secret parameters (`_token`, keys, signatures) as `[redacted]`; absent when empty. */
  query?: string;
  status: number;
  /** The `ERR_*` code of a refusal; for a batch answered 2xx with some records refused, the first record's code. */
  code?: string;
  /** The message that came with `code`. */
  message?: string;
  /** Body bytes: the Content-Length, or the bytes read when the body was chunked; 0 without a body. */
  bytes: number;
  /** Records stored by this request. */
  records: number;
  /** Records of a batch refused one by one (the request itself was answered 2xx). */
  rejected?: number;
  /** Valid records whose client key was accepted before: answered, not stored again. */
  duplicates?: number;
  userAgent?: string;
  /** The client IP as the relay sees it (`X-Forwarded-For` only with TRUST_PROXY=true). */
  ip: string;
  /** Unknown-token list only: the start of the token the request carried (`trk_AbCd…`), when it carried one in the header or URL. */
  tokenHint?: string;
  /**
   * Requests of this API process not kept since its entry before, over an allowance: in the
   * unknown-token list, its per-minute allowance; in a tracker's, its accepted requests a second.
   */
  suppressed?: number;
}

/** What a search asks for; every criterion given must hold. */
export interface RequestFilter {
  /** `401`, a class (`4xx`), `accepted` (below 400) or `refused` (400 and above). */
  status?: string;
  /** An `ERR_*` code, any case. */
  code?: string;
  /** Found, in any case, in the path, query, code, message, user agent, IP or token hint. */
  text?: string;
  /** Entries answered at most; default 100. */
  limit?: number;
}

/** `total`: entries kept; `matched`: of those, the ones the filter accepts; `entries`: the first `limit` of them, newest first. */
export interface RequestPage {
  total: number;
  matched: number;
  entries: RequestEntry[];
}

export const STATUS_FILTER = /^([1-5][0-9]{2}|[1-5]xx|accepted|refused)$/i;

/** A tracker's list: `<prefix>:requests:<tracker>`, newest first. */
export function requestHistoryKey(prefix: string, trackerId: string): string {
  return `${prefix}:requests:${trackerId}`;
}

/** The relay's list of requests whose token matched no tracker: `<prefix>:requests-unknown-token`. */
export function unknownTokenKey(prefix: string): string {
  return `${prefix}:requests-unknown-token`;
}

function statusMatches(status: number, filter: string): boolean {
  const f = filter.toLowerCase();
  if (f === 'accepted') return status < 400;
  if (f === 'refused') return status >= 400;
  if (f.endsWith('xx')) return Math.floor(status / 100) === Number(f[0]);
  return status === Number(f);
}

function textMatches(entry: RequestEntry, needle: string): boolean {
  const fields = [entry.path, entry.endpoint, entry.query, entry.code, entry.message, entry.userAgent, entry.ip, entry.tokenHint];
  return fields.some((f) => f !== undefined && f.toLowerCase().includes(needle));
}

/** The entries that pass the filter, in the order given. */
export function filterRequests(entries: readonly RequestEntry[], filter: RequestFilter): RequestEntry[] {
  const code = filter.code?.toUpperCase();
  const text = filter.text?.toLowerCase();
  return entries.filter(
    (e) => (filter.status === undefined || statusMatches(e.status, filter.status)) && (code === undefined || e.code === code) && (text === undefined || text === '' || textMatches(e, text)),
  );
}

/**
 * Reads the capped lists the API processes write (src/http/history/history-recorder.ts). A list
 * holds at most REQUEST_HISTORY_SIZE entries, so a search reads it whole and filters in process.
 */
export class RequestHistory {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  list(trackerId: string, filter: RequestFilter = {}): Promise<RequestPage> {
    return this.read(requestHistoryKey(this.prefix, trackerId), filter);
  }

  listUnknownToken(filter: RequestFilter = {}): Promise<RequestPage> {
    return this.read(unknownTokenKey(this.prefix), filter);
  }

  private async read(key: string, filter: RequestFilter): Promise<RequestPage> {
    const items = await this.redis.lrange(key, 0, -1);
    const entries: RequestEntry[] = [];
    for (const item of items) {
      try {
        entries.push(JSON.parse(item) as RequestEntry);
      } catch {
        // Not ours (written by hand): skipped rather than failing the whole list.
      }
    }
    const matched = filterRequests(entries, filter);
    return { total: items.length, matched: matched.length, entries: matched.slice(0, filter.limit ?? 100) };
  }
}
