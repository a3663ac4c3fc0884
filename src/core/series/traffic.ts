import type { RedisClient } from '../redis/cluster';
import { indexInWindow, MINUTE_MS, WINDOW_MINUTES, windowOf } from './minutes';

/** What became of a record: stored, a duplicate of a key accepted before, or refused with an `ERR_*` code. */
export type TrafficOutcome = 'accepted' | 'duplicate' | (string & {});

/** Records of one endpoint and outcome, minute by minute over the last 24 hours. */
export interface TrafficSeries {
  /** The route that answered (`/v3/event`, `/v3/event/tracker.gif`, `/v3/webhooks/:tracker/:source`), `unmatched`, or `other` past the per-minute cap. */
  endpoint: string;
  /** `accepted`, `duplicate`, an `ERR_*` code, or `refused` past the per-minute cap. */
  outcome: TrafficOutcome;
  /** Records over the whole window. */
  total: number;
  /** One count a minute, oldest first, `WINDOW_MINUTES` of them. */
  counts: number[];
}

/** A tracker's records per minute over the last 24 hours (`GET /admin/api/trackers/:id/traffic`). */
export interface TrafficPicture {
  /** The first minute of the window (ISO 8601); the last is the current minute. */
  start: string;
  /** Seconds between two points: 60. */
  stepSeconds: number;
  /** Records over the window: stored, duplicates, refused (every `ERR_*` outcome). */
  totals: { accepted: number; duplicate: number; refused: number };
  /** One per endpoint and outcome seen in the window, the largest first. */
  series: TrafficSeries[];
}

/**
 * A tracker's hash of one bucket of 10 minutes (src/core/series/minutes.ts):
 * `<prefix>:traffic:<tracker>:<bucket>`, fields `<minute in the bucket>|<endpoint>|<outcome>`
 * holding record counts. Only one tracker's keys are ever written or read together, so its id
 * could later carry a Redis Cluster hash tag.
 */
export function trafficKey(prefix: string, trackerId: string, bucket: number): string {
  return `${prefix}:traffic:${trackerId}:${bucket}`;
}

export function trafficField(minute: string, endpoint: string, outcome: string): string {
  return `${minute}|${endpoint}|${outcome}`;
}

export function isRefusal(outcome: string): boolean {
  return outcome !== 'accepted' && outcome !== 'duplicate';
}

/** Reads the buckets the API processes write (src/http/traffic/traffic-counter.ts). */
export class TrafficReader {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  async read(trackerId: string, now = Date.now()): Promise<TrafficPicture> {
    const { startMinute, buckets } = windowOf(now);
    const pipeline = this.redis.pipeline();
    for (const bucket of buckets) pipeline.hgetall(trafficKey(this.prefix, trackerId, bucket));
    const results = (await pipeline.exec()) ?? [];
    const bySeries = new Map<string, TrafficSeries>();
    const totals = { accepted: 0, duplicate: 0, refused: 0 };
    results.forEach(([err, hash], i) => {
      if (err) throw err;
      for (const [field, value] of Object.entries(hash as Record<string, string>)) {
        const index = indexInWindow(buckets[i]!, field, startMinute);
        const count = Number(value);
        if (index < 0 || !(count > 0)) continue;
        const name = field.slice(2);
        const bar = name.lastIndexOf('|');
        if (bar < 0) continue;
        let series = bySeries.get(name);
        if (!series) {
          series = { endpoint: name.slice(0, bar), outcome: name.slice(bar + 1), total: 0, counts: new Array<number>(WINDOW_MINUTES).fill(0) };
          bySeries.set(name, series);
        }
        series.counts[index]! += count;
        series.total += count;
        if (series.outcome === 'accepted') totals.accepted += count;
        else if (series.outcome === 'duplicate') totals.duplicate += count;
        else totals.refused += count;
      }
    });
    return {
      start: new Date(startMinute * MINUTE_MS).toISOString(),
      stepSeconds: MINUTE_MS / 1000,
      totals,
      series: [...bySeries.values()].sort((a, b) => b.total - a.total || a.endpoint.localeCompare(b.endpoint) || a.outcome.localeCompare(b.outcome)),
    };
  }
}
