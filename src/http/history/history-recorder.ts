import type { RedisClient } from '../../core/redis/cluster';
import type { HttpContext } from '../../core/requests/request-state';
import { withDeadline } from '../../core/deadline';
import { tokenHint } from '../../core/redact';
import { requestHistoryKey, unknownTokenKey, type RequestEntry } from '../../core/requests/request-history';
import type { TrackerResolver } from '../../ingest/resolver';
import { privacyPlan } from '../../core/records/privacy';
import { requestToken } from '../request-token';
import { buildRequestEntry, fitEntry, protectEntry } from './history-entry';
import { Allowance } from './allowance';

export interface HistoryRecorderOptions {
  /** The API's producer connection. */
  redis: RedisClient;
  redisPrefix: string;
  /** Attributes a request refused before its tracker was known (a malformed body with a header token). */
  resolver: TrackerResolver;
  /** Entries kept per tracker; 0 keeps none. */
  size: number;
  /** Bytes of one entry at most. */
  entryBytes: number;
  /** Entries kept in the relay-wide unknown-token list; 0 keeps none. */
  unknownSize: number;
  /** Unknown-token requests this process keeps per minute at most. */
  unknownPerMinute: number;
  /** Accepted requests of one tracker this process keeps per second at most; refused ones are always kept. */
  acceptedPerSecond: number;
  /**
   * A write Redis has not answered after this long is given up (its entries are lost), so that the
   * next can start: a pipeline caught in a dropped connection may never settle. Default 2000 ms.
   */
  writeTimeoutMs?: number;
  /** A failed write: the history only misses those entries. */
  onError?: (err: Error) => void;
  now?: () => number;
}

interface Pending {
  cap: number;
  /** Turned into JSON only when written: entries pushed out by newer ones before then cost nothing more. */
  entries: RequestEntry[];
}

/**
 * How long entries gather before they are written. At thousands of requests a second, one
 * pipeline per event-loop turn would cost the API process more than the entries themselves.
 */
const GATHER_MS = 50;

/**
 * Keeps the last requests of each tracker, and the relay's requests with an unknown token, in
 * capped Redis lists. Off the request path: observing a request only builds a small entry and queues it; the
 * entries queued within GATHER_MS (or while the previous write is under way) go to Redis
 * together, in one pipeline (LPUSH + LTRIM per list) that no request waits for, at most one at a time. While one is under way, each list's queue
 * keeps only as many entries as the list holds, so a Redis outage costs bounded memory and only
 * leaves a gap in the history.
 */
export class HistoryRecorder {
  private pending = new Map<string, Pending>();
  private scheduled = false;
  private inflight: Promise<void> | undefined;
  private readonly unknownAllowance: Allowance;
  /** Per tracker: how many of its accepted requests are kept. */
  private readonly acceptedAllowance = new Map<string, Allowance>();
  private readonly now: () => number;
  /** Never aborted: writes end by their deadline alone. */
  private readonly running = new AbortController();

  constructor(private readonly options: HistoryRecorderOptions) {
    this.now = options.now ?? Date.now;
    this.unknownAllowance = new Allowance(options.unknownPerMinute, 60_000, this.now());
  }


  /** Writes what is queued; resolves once Redis has answered (for shutdown and tests). */
  async flush(): Promise<void> {
    while (this.inflight || this.pending.size > 0) {
      if (this.inflight) await this.inflight;
      else this.write();
    }
  }

  /** A finished v3 request, its answer final (src/http/request-observers.ts). */
  observe(ctx: HttpContext): void {
    const trackerId = ctx.state.trackerId;
    if (trackerId !== undefined) {
      if (this.options.size === 0) return;
      // Refusals are what a history is read for: each is kept. Accepted requests within the
      // allowance, so that a tracker's thousands a second do not each cost an entry (built, turned
      // into JSON, sent to Redis) only to be pushed out of its list within the second.
      const skipped = ctx.status >= 400 ? 0 : this.acceptedAllowanceOf(trackerId).take(this.now());
      if (skipped === undefined) return;
      const entry = buildRequestEntry(ctx);
      if (skipped > 0) entry.suppressed = skipped;
      this.queue(requestHistoryKey(this.options.redisPrefix, trackerId), this.options.size, entry);
      return;
    }
    if (ctx.status < 400) return;
    const token = requestToken(ctx);
    // Built now: the context is not ours once the answer is sent.
    const entry = buildRequestEntry(ctx);
    if (entry.code === 'ERR_INVALID_TOKEN') return this.unknown(entry, token);
    // Without a token nothing says whose the request was; it is in the request counters only.
    if (!token) return;
    this.options.resolver.resolve(token).then(
      (tracker) => {
        if (!tracker) this.unknown(entry, token);
        else if (this.options.size > 0) {
          if (tracker.privacyRules.length > 0) protectEntry(entry, privacyPlan(tracker));
          this.queue(requestHistoryKey(this.options.redisPrefix, tracker.id), this.options.size, entry);
        }
      },
      () => undefined,
    );
  }

  /** Kept within the per-minute allowance (a token bucket); beyond it only counted, in the next kept entry. */
  private unknown(entry: RequestEntry, token: string | undefined): void {
    if (this.options.unknownSize === 0) return;
    const skipped = this.unknownAllowance.take(this.now());
    if (skipped === undefined) return;
    if (token) entry.tokenHint = tokenHint(token);
    if (skipped > 0) entry.suppressed = skipped;
    this.queue(unknownTokenKey(this.options.redisPrefix), this.options.unknownSize, entry);
  }

  private acceptedAllowanceOf(trackerId: string): Allowance {
    let allowance = this.acceptedAllowance.get(trackerId);
    if (!allowance) {
      allowance = new Allowance(this.options.acceptedPerSecond, 1000, this.now());
      this.acceptedAllowance.set(trackerId, allowance);
    }
    return allowance;
  }

  private queue(key: string, cap: number, entry: RequestEntry): void {
    let list = this.pending.get(key);
    if (!list) {
      list = { cap, entries: [] };
      this.pending.set(key, list);
    }
    list.entries.push(entry);
    // The list keeps `cap` entries: older queued ones would be trimmed at once.
    if (list.entries.length > cap) list.entries.shift();
    if (!this.scheduled && !this.inflight) this.schedule();
  }

  private schedule(): void {
    this.scheduled = true;
    setTimeout(() => this.write(), GATHER_MS).unref();
  }

  private write(): void {
    this.scheduled = false;
    if (this.inflight || this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    const pipeline = this.options.redis.pipeline();
    for (const [key, { cap, entries }] of batch) pipeline.lpush(key, ...entries.map((e) => fitEntry(e, this.options.entryBytes))).ltrim(key, 0, cap - 1);
    const onError = this.options.onError ?? (() => undefined);
    const timeoutMs = this.options.writeTimeoutMs ?? 2000;
    const exec = withDeadline({ timeoutMs, signal: this.running.signal, timeoutError: () => new Error(`no answer from Redis within ${timeoutMs} ms`) }, () => pipeline.exec());
    this.inflight = exec.then(
      (results) => {
        const failed = results?.find(([err]) => err)?.[0];
        if (failed) onError(failed);
      },
      (err: Error) => onError(err),
    );
    void this.inflight.finally(() => {
      this.inflight = undefined;
      if (this.pending.size > 0 && !this.scheduled) this.schedule();
    });
  }
}
