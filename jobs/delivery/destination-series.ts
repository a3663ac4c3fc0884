import type { RedisClient } from '../../src/core/redis/cluster';
import { bucketExpiresAt, bucketOf, indexInWindow, MINUTE_MS, minuteField, WINDOW_MINUTES, windowOf } from '../../src/core/series/minutes';
import { withDeadline } from '../../src/core/deadline';
import { sleep } from '../../src/core/sleep';
import type { DeliveryKeys } from './keys';
import { LuaScript } from '../../src/core/redis/lua-script';

/**
 * A destination's pictures over time: records delivered and dead-lettered per minute (counted
 * where they happen: the delivery loop's confirm and the dead-letter store), its backlog and lag
 * sampled once a minute by the worker that holds it, and the moments its state changed. Kept in
 * one hash per 10 minutes (src/core/series/minutes.ts), fields `<minute in the bucket>|<d|f|b|l>`,
 * and a capped list of markers; all under the destination's own key base, so they go with it.
 */

/** What a destination is doing, as its markers tell it. */
export type DeliveryState = 'delivering' | 'failing' | 'paused' | 'disabled';

/** A change of state: `from` is the state before (`''` when none was known: the first start). */
export interface DeliveryMarker {
  at: string;
  state: DeliveryState;
  from: DeliveryState | '';
  /** Why it failed or paused: the destination's error. */
  message?: string;
  /** The tracker partition whose delivery changed, when the tracker has several (each is delivered on its own). */
  partition?: number;
}

/** A destination's last 24 hours, a point a minute, oldest first (`GET /admin/api/trackers/:id/destinations/:dest/traffic`). */
export interface DestinationPicture {
  /** The first minute of the window (ISO 8601); the last is the current minute. */
  start: string;
  stepSeconds: number;
  /** Records the destination confirmed, per minute. */
  delivered: number[];
  /** Records it refused for good (dead-lettered), per minute. */
  deadLettered: number[];
  /** Records its rules kept from it (filter false, outside the sample), per minute, counted as they were routed. */
  skipped: number[];
  /** Records its filter could not be evaluated on (not delivered either), per minute. */
  filterErrors: number[];
  /** Records not yet delivered (in Redis and on disk), sampled once a minute; null where no worker held the destination. */
  backlog: Array<number | null>;
  /** Age of the oldest of them in milliseconds, sampled with the backlog. */
  lagMs: Array<number | null>;
  totals: { delivered: number; deadLettered: number; skipped: number; filterErrors: number };
  /** The last changes of state, newest first, at most MAX_MARKERS (some may be older than the window). */
  markers: DeliveryMarker[];
}

/** Markers kept per destination. */
export const MAX_MARKERS = 100;

/** A sample (a status read and a write) not done within this long is given up: a gap. */
const SAMPLE_TIMEOUT_MS = 10_000;

/** An error message in a marker is cut to this many characters. */
const MESSAGE_CHARS = 300;

/** The field suffixes of a bucket: delivered, dead-lettered (failed), backlog, lag, skipped by the rules, filter errors. */
export const SERIES_FIELD = { delivered: 'd', deadLettered: 'f', backlog: 'b', lagMs: 'l', skipped: 's', filterErrors: 'e' } as const;

export function seriesKey(keys: Pick<DeliveryKeys, 'series'>, bucket: number): string {
  return `${keys.series}:${bucket}`;
}

/** The bucket key, its field for `series` at `at`, and when the bucket expires: for the scripts that count. */
export function seriesSlot(keys: Pick<DeliveryKeys, 'series'>, series: keyof typeof SERIES_FIELD, at: number): { key: string; field: string; expiresAt: number } {
  const bucket = bucketOf(at);
  return { key: seriesKey(keys, bucket), field: `${minuteField(at)}|${SERIES_FIELD[series]}`, expiresAt: bucketExpiresAt(bucket) };
}

/**
 * Lua: a change of state, marked once. Nothing happens when the state is already `ARGV[1]`, or
 * when `ARGV[5…]` lists the states it may come from and the current one is not among them. The
 * HDEL first makes the first write one that frees, so a change is marked on a full Redis too
 * (src/core/redis/out-of-memory.ts): the list stays capped.
 * KEYS: status hash, markers. ARGV: state, at, message ('' for none), cap, states it may come from…
 */
const MARK = new LuaScript(`
local from = redis.call('HGET', KEYS[1], 'state') or ''
if from == ARGV[1] then return 0 end
if #ARGV > 4 then
  local allowed = false
  for i = 5, #ARGV do if ARGV[i] == from then allowed = true end end
  if not allowed then return 0 end
end
redis.call('HDEL', KEYS[1], 'state')
redis.call('HSET', KEYS[1], 'state', ARGV[1])
local marker = {at = ARGV[2], state = ARGV[1], from = from}
if ARGV[3] ~= '' then marker.message = ARGV[3] end
redis.call('LPUSH', KEYS[2], cjson.encode(marker))
redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[4]) - 1)
return 1`);

/**
 * Lua for the delivery loop's confirm (jobs/delivery/delivery-loop.ts), after the cursor moved: counts the
 * batch in its minute and marks `delivering` when the destination was in another state.
 * Uses KEYS[4] (status), KEYS[6] (bucket), KEYS[7] (markers); ARGV[5] (time), ARGV[7] (field),
 * ARGV[8] (bucket expiry), ARGV[9] (marker cap), ARGV[10] (records the destination took).
 */
export const CONFIRM_SERIES = `
redis.call('HINCRBY', KEYS[6], ARGV[7], ARGV[10])
redis.call('EXPIREAT', KEYS[6], ARGV[8])
local from = redis.call('HGET', KEYS[4], 'state') or ''
if from ~= 'delivering' then
  redis.call('HSET', KEYS[4], 'state', 'delivering')
  redis.call('LPUSH', KEYS[7], cjson.encode({at = ARGV[5], state = 'delivering', from = from}))
  redis.call('LTRIM', KEYS[7], 0, tonumber(ARGV[9]) - 1)
end`;

/** Backlog and lag at the time of a sample (DestinationStatusStore.read gives both). */
export interface BacklogSample {
  queued: number;
  lagMs: number;
}

export class DestinationSeries {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Pick<DeliveryKeys, 'series' | 'events' | 'status'>,
  ) {}

  /** Marks a change of state (once: the same state again marks nothing). Resolves true when marked. */
  async mark(state: DeliveryState, { at = new Date(), message = '', onlyFrom = [] }: { at?: Date; message?: string; onlyFrom?: Array<DeliveryState | ''> } = {}): Promise<boolean> {
    const text = message.length > MESSAGE_CHARS ? `${message.slice(0, MESSAGE_CHARS - 1)}…` : message;
    return (await MARK.run(this.redis, 2, this.keys.status, this.keys.events, state, at.toISOString(), text, MAX_MARKERS, ...onlyFrom)) === 1;
  }

  /** Leaves the backlog and lag of `now`'s minute (a later sample of the same minute replaces it). */
  async sample(sample: BacklogSample, now = Date.now()): Promise<void> {
    const backlog = seriesSlot(this.keys, 'backlog', now);
    const lag = seriesSlot(this.keys, 'lagMs', now);
    await this.redis.pipeline().hset(backlog.key, backlog.field, sample.queued, lag.field, Math.round(sample.lagMs)).expireat(backlog.key, backlog.expiresAt).exec();
  }

  /**
   * Samples at once, then every `everyMs` (aligned to the clock: by default at the start of every
   * minute) until `signal` aborts. A sample Redis refuses (down, or at its memory limit) leaves a
   * gap in the picture, nothing more.
   */
  async runSampler(signal: AbortSignal, read: () => Promise<BacklogSample>, everyMs = MINUTE_MS): Promise<void> {
    while (!signal.aborted) {
      try {
        // A call caught in a dropped connection may never settle: past its deadline the sampler moves on.
        await withDeadline({ timeoutMs: SAMPLE_TIMEOUT_MS, signal, timeoutError: () => new Error('sample timed out') }, async () => this.sample(await read()));
      } catch {
        // A gap in the picture.
      }
      await sleep(everyMs - (Date.now() % everyMs) + 100, signal).catch(() => undefined);
    }
  }

  async read(now = Date.now()): Promise<DestinationPicture> {
    const { startMinute, buckets } = windowOf(now);
    const pipeline = this.redis.pipeline();
    for (const bucket of buckets) pipeline.hgetall(seriesKey(this.keys, bucket));
    pipeline.lrange(this.keys.events, 0, -1);
    const results = (await pipeline.exec()) ?? [];
    const picture: DestinationPicture = {
      start: new Date(startMinute * MINUTE_MS).toISOString(),
      stepSeconds: MINUTE_MS / 1000,
      delivered: new Array<number>(WINDOW_MINUTES).fill(0),
      deadLettered: new Array<number>(WINDOW_MINUTES).fill(0),
      skipped: new Array<number>(WINDOW_MINUTES).fill(0),
      filterErrors: new Array<number>(WINDOW_MINUTES).fill(0),
      backlog: new Array<number | null>(WINDOW_MINUTES).fill(null),
      lagMs: new Array<number | null>(WINDOW_MINUTES).fill(null),
      totals: { delivered: 0, deadLettered: 0, skipped: 0, filterErrors: 0 },
      markers: [],
    };
    for (const [err] of results) if (err) throw err;
    buckets.forEach((bucket, i) => {
      for (const [field, value] of Object.entries(results[i]![1] as Record<string, string>)) {
        const index = indexInWindow(bucket, field, startMinute);
        const n = Number(value);
        if (index < 0 || !Number.isFinite(n)) continue;
        const kind = field.slice(2);
        if (kind === SERIES_FIELD.delivered) {
          picture.delivered[index] = n;
          picture.totals.delivered += n;
        } else if (kind === SERIES_FIELD.deadLettered) {
          picture.deadLettered[index] = n;
          picture.totals.deadLettered += n;
        } else if (kind === SERIES_FIELD.skipped) {
          picture.skipped[index] = n;
          picture.totals.skipped += n;
        } else if (kind === SERIES_FIELD.filterErrors) {
          picture.filterErrors[index] = n;
          picture.totals.filterErrors += n;
        } else if (kind === SERIES_FIELD.backlog) picture.backlog[index] = n;
        else if (kind === SERIES_FIELD.lagMs) picture.lagMs[index] = n;
      }
    });
    for (const item of results[buckets.length]![1] as string[]) {
      try {
        picture.markers.push(JSON.parse(item) as DeliveryMarker);
      } catch {
        // Not ours: skipped.
      }
    }
    return picture;
  }

  /** Every key of the pictures that may exist at `now`, for removing the destination. */
  keysAt(now = Date.now()): string[] {
    const { buckets } = windowOf(now);
    // The bucket before the window may not have expired yet; the next may have been started by a process ahead of this clock.
    return [buckets[0]! - 1, ...buckets, buckets[buckets.length - 1]! + 1].map((b) => seriesKey(this.keys, b)).concat(this.keys.events);
  }
}

/**
 * One destination's picture over the partitions of its tracker, each delivered on its own lease:
 * counts and backlogs add up (a minute no partition sampled stays null), the lag is the oldest
 * partition's, and the markers are the newest MAX_MARKERS of all, each naming its partition.
 */
export function combinePictures(parts: readonly DestinationPicture[]): DestinationPicture {
  if (parts.length === 1) return parts[0]!;
  const first = parts[0]!;
  const add = (pick: (p: DestinationPicture) => Array<number | null>, combine: (a: number, b: number) => number) =>
    first.delivered.map((_, i) => parts.reduce<number | null>((acc, p) => {
      const v = pick(p)[i] ?? null;
      return v === null ? acc : acc === null ? v : combine(acc, v);
    }, null));
  const sum = (a: number, b: number) => a + b;
  return {
    start: first.start,
    stepSeconds: first.stepSeconds,
    delivered: add((p) => p.delivered, sum).map((v) => v ?? 0),
    deadLettered: add((p) => p.deadLettered, sum).map((v) => v ?? 0),
    skipped: add((p) => p.skipped, sum).map((v) => v ?? 0),
    filterErrors: add((p) => p.filterErrors, sum).map((v) => v ?? 0),
    backlog: add((p) => p.backlog, sum),
    lagMs: add((p) => p.lagMs, Math.max),
    totals: {
      delivered: parts.reduce((n, p) => n + p.totals.delivered, 0),
      deadLettered: parts.reduce((n, p) => n + p.totals.deadLettered, 0),
      skipped: parts.reduce((n, p) => n + p.totals.skipped, 0),
      filterErrors: parts.reduce((n, p) => n + p.totals.filterErrors, 0),
    },
    markers: parts
      .flatMap((p, partition) => p.markers.map((m) => ({ ...m, partition })))
      .sort((a, b) => b.at.localeCompare(a.at) || a.partition - b.partition)
      .slice(0, MAX_MARKERS),
  };
}
