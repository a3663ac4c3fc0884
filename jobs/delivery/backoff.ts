export interface BackoffPolicy {
  /** First delay. Default 500 ms. */
  baseMs: number;
  /** Delays never exceed this. Default 60 s. */
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 500, maxMs: 60_000 };

/**
 * Exponential backoff with full jitter (a random delay between half and all of the exponential
 * step, so that many workers retrying together spread out). A server's Retry-After is a floor.
 */
export function backoffDelay(attempt: number, policy: BackoffPolicy, retryAfterMs?: number, random: () => number = Math.random): number {
  const exp = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(attempt, 30));
  const jittered = exp / 2 + random() * (exp / 2);
  return Math.round(Math.max(jittered, retryAfterMs ?? 0));
}
