/**
 * The clock of the pictures over time (tracker traffic, destination delivery): one point a minute
 * over the last 24 hours, kept in Redis as one hash per 10 minutes (a bucket) whose fields start
 * with the minute in the bucket (`7|…`). Ten minutes keep a bucket within Redis's compact hash
 * encoding (a listpack, up to `hash-max-listpack-entries`, 512 by default) even at a tracker's
 * cap of 19 series a minute, where a hash per hour would turn into a hash table several times
 * larger. A window of 1 440 minutes touches 145 buckets; each expires as a whole 24 hours after
 * it ended.
 */

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;

/** Minutes in a bucket (one Redis hash). */
export const BUCKET_MINUTES = 10;

/** Minutes in a picture: the last 24 hours, the current minute included. */
export const WINDOW_MINUTES = 1440;

/** Minutes since the epoch. */
export function minuteOf(ms: number): number {
  return Math.floor(ms / MINUTE_MS);
}

/** Buckets since the epoch: the suffix of a bucket's key. */
export function bucketOf(ms: number): number {
  return Math.floor(minuteOf(ms) / BUCKET_MINUTES);
}

/** The field prefix of a minute in its bucket: one digit, `0` to `9`. */
export function minuteField(ms: number): string {
  return String(minuteOf(ms) % BUCKET_MINUTES);
}

/**
 * When a bucket expires (Unix seconds, for EXPIREAT): 24 hours after it ended, plus a minute of
 * slack for clocks that disagree. EXPIREAT with a fixed time is idempotent, so every write may set
 * it again without pushing it back.
 */
export function bucketExpiresAt(bucket: number): number {
  return (bucket + 1) * BUCKET_MINUTES * 60 + 24 * 3600 + 60;
}

/** The window ending with the minute of `now`: its first minute and the buckets it touches, oldest first. */
export function windowOf(now: number): { startMinute: number; buckets: number[] } {
  const startMinute = minuteOf(now) - WINDOW_MINUTES + 1;
  const buckets: number[] = [];
  for (let b = Math.floor(startMinute / BUCKET_MINUTES); b <= bucketOf(now); b++) buckets.push(b);
  return { startMinute, buckets };
}

/**
 * The index in the window of a field's minute (`<m>|…` in the hash of `bucket`), or -1 when it is
 * outside the window or not a field of ours.
 */
export function indexInWindow(bucket: number, field: string, startMinute: number): number {
  const m = field.charCodeAt(0) - 48;
  if (field[1] !== '|' || !(m >= 0 && m < BUCKET_MINUTES)) return -1;
  const index = bucket * BUCKET_MINUTES + m - startMinute;
  return index >= 0 && index < WINDOW_MINUTES ? index : -1;
}
