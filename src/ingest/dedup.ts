import { hash } from 'node:crypto';
import type { RecordKind } from '../core/records/types';
import { MAX_DEDUP_WINDOW_HOURS } from '../core/trackers/types';
import { duplicatesKey } from '../../jobs/routing/ingest-job';

const HOUR_MS = 3_600_000;
/**
 * Markers are kept in one Redis set per tracker per 4 hours, which expires as a whole once the
 * window has passed since the end of its 4 hours. Each keyed write looks its keys up in every set of
 * the window (7 for the default day, 43 for the longest week): one call of Redis from Lua each,
 * about 6 µs for a job of 20 keys, which with hourly sets came to a fifth of a core of Redis at
 * 11 000 keyed requests a second. Wider sets hold markers longer: on average 2 hours past the
 * window instead of half an hour, 6 % more memory for a 24-hour window.
 */
export const BUCKET_HOURS = 4;
export const BUCKET_MS = BUCKET_HOURS * HOUR_MS;
/** A duplicate list outlives the longest window by a day, so a router that lags behind still finds it. */
export const DUPLICATES_TTL_MS = (MAX_DEDUP_WINDOW_HOURS + 24) * HOUR_MS;

/** Bytes of a marker. */
export const MEMBER_BYTES = 12;

/**
 * What a client-keyed record is remembered by: 12 bytes of SHA-256 over its level and `_id`. As a
 * set member that is one 16-byte allocation, whatever the key's length (up to 128 characters);
 * two different keys share a marker with a chance of about n²/2⁹⁷ (1e-13 for 86 million keys).
 */
export function dedupMember(kind: RecordKind, id: string): Buffer {
  // One-shot hash: half the cost of a Hash object per record.
  return hash('sha256', `${kind}\n${id}`, 'buffer').subarray(0, MEMBER_BYTES);
}

/** The first hour (since the epoch) of the set that takes the markers accepted at `ms`. */
export function bucketStartHour(ms: number): number {
  return Math.floor(ms / BUCKET_MS) * BUCKET_HOURS;
}

/**
 * A tracker partition's markers of the BUCKET_HOURS starting at `startHour` (see bucketStartHour),
 * under the prefix of the partition's shard. Partition 0 keeps the historical name.
 */
export function seenBucketKey(prefix: string, trackerId: string, startHour: number, partition = 0): string {
  return `${prefix}:seen:${trackerId}${partition ? `:p${partition}` : ''}:${startHour}`;
}

/**
 * The keys the dedup script needs for a tracker at `nowMs`: the duplicates list, then the sets
 * from the current one back to the one that holds `nowMs - window`.
 */
export function dedupKeys(prefix: string, trackerId: string, token: string, windowHours: number, nowMs: number, partition = 0): string[] {
  const keys = [duplicatesKey(prefix, token)];
  const oldest = bucketStartHour(nowMs - windowHours * HOUR_MS);
  for (let h = bucketStartHour(nowMs); h >= oldest; h -= BUCKET_HOURS) keys.push(seenBucketKey(prefix, trackerId, h, partition));
  return keys;
}

/** When the current set expires: `window` after the end of its BUCKET_HOURS. */
export function bucketExpiresAt(windowHours: number, nowMs: number): number {
  return (Math.floor(nowMs / BUCKET_MS) + 1) * BUCKET_MS + windowHours * HOUR_MS;
}

/**
 * DEDUP_SCRIPT's ARGV for a job: when the current set expires (ms since the epoch), how long
 * the duplicates list lives, the keyed records' markers as one string of MEMBER_BYTES each, and
 * their indices in the job, comma-separated, or '' when every record of the job is keyed. Two
 * arguments for the markers rather than two per record: each argument costs its framing, and the
 * client's and Redis's handling of it, on every write.
 */
export function dedupArgs(expiresAtMs: number, duplicatesTtlMs: number, members: readonly Buffer[], indices: readonly number[]): Array<string | Buffer> {
  const everyRecord = indices.every((index, i) => index === i);
  return [String(expiresAtMs), String(duplicatesTtlMs), Buffer.concat(members), everyRecord ? '' : indices.join(',')];
}

/**
 * Marks a job's client-keyed records as seen and names the ones seen before. Runs in the same
 * script as the job's BullMQ add (src/ingest/job-add.ts), so a marker never exists without its record nor a record without
 * its marker. KEYS: duplicates list, the current set, the older sets of the window (newest first).
 * ARGV: see dedupArgs. A key repeated within the call is a duplicate from its second occurrence.
 * Returns, per keyed record, 1 for a duplicate and 0 for a first sighting; the duplicates' job
 * indices are stored comma-separated in KEYS[1].
 *
 * The older sets are looked into only when one of them exists (one EXISTS for all), and then
 * each without asking first whether it exists (SMISMEMBER finds nothing in a missing set): each
 * call of Redis from Lua has a cost of its own.
 */
export const DEDUP_SCRIPT = `
local W = ${MEMBER_BYTES}
local blob = ARGV[3]
local n = #blob / W
local members, index = {}, {}
for i = 1, n do members[i] = string.sub(blob, (i - 1) * W + 1, i * W) end
if ARGV[4] == '' then
  for i = 1, n do index[i] = tostring(i - 1) end
else
  for s in string.gmatch(ARGV[4], '%d+') do index[#index + 1] = s end
end
local seen = {}
local function lookIn(key)
  local hits = redis.call('SMISMEMBER', key, unpack(members))
  for i = 1, n do
    if hits[i] == 1 then seen[i] = true end
  end
end
if n > 0 then
  lookIn(KEYS[2])
  if #KEYS > 2 and redis.call('EXISTS', unpack(KEYS, 3)) > 0 then
    for k = 3, #KEYS do lookIn(KEYS[k]) end
  end
end
local out, fresh, dupes, now = {}, {}, {}, {}
for i = 1, n do
  local m = members[i]
  if seen[i] or now[m] then
    out[i] = 1
    dupes[#dupes + 1] = index[i]
  else
    out[i] = 0
    now[m] = true
    fresh[#fresh + 1] = m
  end
end
if #fresh > 0 then
  redis.call('SADD', KEYS[2], unpack(fresh))
  redis.call('PEXPIREAT', KEYS[2], ARGV[1])
end
if #dupes > 0 then redis.call('SET', KEYS[1], table.concat(dupes, ','), 'PX', ARGV[2]) end
return out`;
