import type { RedisClient } from '../../core/redis/cluster';
import type { HttpContext } from '../../core/requests/request-state';
import { withDeadline } from '../../core/deadline';
import { bucketExpiresAt, bucketOf, minuteField, minuteOf } from '../../core/series/minutes';
import { isRefusal, trafficKey } from '../../core/series/traffic';
import type { TrackerResolver } from '../../ingest/resolver';
import { requestToken } from '../request-token';
import { trafficOutcomes } from './traffic-outcomes';

export interface TrafficCounterOptions {
  /** The API's producer connection. */
  redis: RedisClient;
  redisPrefix: string;
  /** Files a request refused before its tracker was known (a malformed body with a header token) under that tracker. */
  resolver: TrackerResolver;
  /** How often the counts gathered in this process go to Redis (TRAFFIC_FLUSH_MS). Default 5000 ms. */
  flushMs: number;
  /** Counts are kept in process, not sent, while this says Redis is down (an outage's 503s are counted too). Default: always up. */
  isConnected?: () => boolean;
  /** A write Redis has not answered after this long is given up (its counts are lost). Default 2000 ms. */
  writeTimeoutMs?: number;
  /** A failed write: the pictures only miss those counts. */
  onError?: (err: Error) => void;
  now?: () => number;
}

/**
 * Series (endpoint and outcome) of one tracker in one minute that one process keeps apart. Real
 * traffic has a handful; past this, a new series is folded into `other|accepted`, `other|duplicate`
 * or `other|refused`, so a client that tries every endpoint and every mistake cannot grow the hash
 * beyond 19 fields a minute.
 */
export const SERIES_PER_MINUTE = 16;

/** The series of a tracker in the minute being counted, and the key of its bucket. */
interface CurrentMinute {
  minute: number;
  key: string;
  field: string;
  seen: Set<string>;
}

interface BucketCounts {
  bucket: number;
  fields: Map<string, number>;
}

/**
 * Counts each tracker's records per minute, by endpoint and outcome (accepted, duplicate, refused
 * with its code), for the console's pictures over time. The request path only adds to a map in
 * process memory; every `flushMs` the counts go to Redis in one pipeline (HINCRBY per field and
 * an EXPIREAT per bucket), which no request waits for. So a busy tracker costs Redis a few
 * commands every few seconds, not one per request.
 */
export class TrafficCounter {
  private pending = new Map<string, BucketCounts>();
  private readonly current = new Map<string, CurrentMinute>();
  private timer: NodeJS.Timeout | undefined;
  private inflight: Promise<void> | undefined;
  private readonly now: () => number;
  /** Never aborted: writes end by their deadline alone. */
  private readonly running = new AbortController();

  constructor(private readonly options: TrafficCounterOptions) {
    this.now = options.now ?? Date.now;
  }


  /** Adds `records` to the minute of `at` (a finished request's outcomes). */
  count(trackerId: string, endpoint: string, outcomes: ReadonlyArray<readonly [string, number]>, at = this.now()): void {
    const minute = minuteOf(at);
    let current = this.current.get(trackerId);
    if (!current || minute > current.minute) {
      current = { minute, key: trafficKey(this.options.redisPrefix, trackerId, bucketOf(at)), field: minuteField(at), seen: new Set() };
      this.current.set(trackerId, current);
    }
    // A request resolved late, after the minute turned: counted in its own minute, outside the cap.
    const late = minute < current.minute;
    const key = late ? trafficKey(this.options.redisPrefix, trackerId, bucketOf(at)) : current.key;
    let bucket = this.pending.get(key);
    if (!bucket) {
      bucket = { bucket: bucketOf(at), fields: new Map() };
      this.pending.set(key, bucket);
    }
    for (const [outcome, records] of outcomes) {
      let series = `${endpoint}|${outcome}`;
      if (!late && !current.seen.has(series)) {
        if (current.seen.size >= SERIES_PER_MINUTE) series = `other|${isRefusal(outcome) ? 'refused' : outcome}`;
        else current.seen.add(series);
      }
      const field = `${late ? minuteField(at) : current.field}|${series}`;
      bucket.fields.set(field, (bucket.fields.get(field) ?? 0) + records);
    }
    if (!this.timer && !this.inflight) this.schedule();
  }

  /** Sends what is counted; resolves once Redis has answered (for shutdown and tests). Keeps the counts while Redis is down. */
  async flush(): Promise<void> {
    if (this.inflight) await this.inflight;
    if (this.pending.size === 0 || !this.connected()) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.send();
  }

  /** A finished v3 request, its answer final (src/http/request-observers.ts). */
  observe(ctx: HttpContext): void {
    const trackerId = ctx.state.trackerId;
    if (trackerId === undefined && ctx.status < 400) return;
    const outcomes = trafficOutcomes(ctx);
    if (outcomes.length === 0) return;
    const endpoint = (ctx as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
    if (trackerId !== undefined) return this.count(trackerId, endpoint, outcomes);
    // Refused before its tracker was known: filed under the tracker of its token, as in the history.
    const token = requestToken(ctx);
    if (!token || outcomes[0]![0] === 'ERR_INVALID_TOKEN') return;
    const at = this.now();
    this.options.resolver.resolve(token).then(
      (tracker) => tracker && this.count(tracker.id, endpoint, outcomes, at),
      () => undefined,
    );
  }

  private connected(): boolean {
    return this.options.isConnected?.() ?? true;
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.inflight) return;
      if (this.connected()) void this.send();
      else {
        this.dropExpired();
        this.schedule();
      }
    }, this.options.flushMs);
    this.timer.unref();
  }

  /** Counts of buckets that would already have expired are of no use once Redis is back. */
  private dropExpired(): void {
    const nowSeconds = this.now() / 1000;
    for (const [key, { bucket }] of this.pending) if (bucketExpiresAt(bucket) <= nowSeconds) this.pending.delete(key);
  }

  private send(): Promise<void> {
    const batch = this.pending;
    this.pending = new Map();
    const pipeline = this.options.redis.pipeline();
    for (const [key, { bucket, fields }] of batch) {
      for (const [field, records] of fields) pipeline.hincrby(key, field, records);
      pipeline.expireat(key, bucketExpiresAt(bucket));
    }
    const onError = this.options.onError ?? (() => undefined);
    const timeoutMs = this.options.writeTimeoutMs ?? 2000;
    const exec = withDeadline({ timeoutMs, signal: this.running.signal, timeoutError: () => new Error(`no answer from Redis within ${timeoutMs} ms`) }, () => pipeline.exec());
    const inflight = exec.then(
      (results) => {
        const failed = results?.find(([err]) => err)?.[0];
        if (failed) onError(failed);
      },
      (err: Error) => onError(err),
    );
    this.inflight = inflight.finally(() => {
      this.inflight = undefined;
      if (this.pending.size > 0 && !this.timer) this.schedule();
    });
    return this.inflight;
  }
}
