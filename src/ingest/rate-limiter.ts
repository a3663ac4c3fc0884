import type { RateLimit } from '../core/trackers/types';

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/**
 * A token bucket per tracker, in process memory. Counted in records, so an array of 100 records
 * weighs 100. The `processes` API processes of one host (API_PROCESSES) split a tracker's limit
 * evenly: each allows 1/processes of its rate and of its burst, so the host as a whole allows
 * the tracker's limit when connections spread evenly over them. Separate hosts each allow it.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly processes = 1,
  ) {}

  /** Takes `count` records from the bucket; returns 0 when allowed, else the seconds to wait. */
  take(trackerId: string, limit: RateLimit | null, count: number): number {
    if (!limit) return 0;
    const rate = limit.recordsPerSecond / this.processes;
    const capacity = Math.max((limit.burst ?? Math.ceil(limit.recordsPerSecond)) / this.processes, count > 0 ? 1 : 0);
    const now = this.now();
    const bucket = this.buckets.get(trackerId) ?? { tokens: capacity, updatedAt: now };
    bucket.tokens = Math.min(capacity, bucket.tokens + ((now - bucket.updatedAt) / 1000) * rate);
    bucket.updatedAt = now;
    this.buckets.set(trackerId, bucket);
    if (bucket.tokens >= count) {
      bucket.tokens -= count;
      return 0;
    }
    return Math.max(1, Math.ceil((Math.min(count, capacity) - bucket.tokens) / rate));
  }
}
