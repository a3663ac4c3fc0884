import { hash } from 'node:crypto';
import type { RecordKind } from '../core/records/types';
import { MAX_DEDUP_WINDOW_HOURS } from '../core/trackers/types';
import { duplicatesKey } from '../../jobs/ingest-job';

/** One hour: markers are kept in one Redis set per tracker per hour, which expires as a whole. */
export const BUCKET_MS = 3_600_000;
/** A duplicate list outlives the longest window by a day, so a router that lags behind still finds it. */
export const DUPLICATES_TTL_MS = (MAX_DEDUP_WINDOW_HOURS + 24) * BUCKET_MS;

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

/** A tracker partition's markers of one hour, under the prefix of the partition's shard. Partition 0 keeps the historical name. */
export function seenBucketKey(prefix: string, trackerId: string, hour: number, partition = 0): string {
  return `${prefix}:seen:${trackerId}${partition ? `:p${partition}` : ''}:${hour}`;
}

/**
 * The keys the dedup script needs for a tracker at `nowMs`: the duplicates list, then the hour
 * buckets from the current one back to the one that holds `nowMs - window`.
 */
export function dedupKeys(prefix: string, trackerId: string, token: string, windowHours: number, nowMs: number, partition = 0): string[] {
  const hour = Math.floor(nowMs / BUCKET_MS);
  const keys = [duplicatesKey(prefix, token)];
  for (let h = hour; h >= hour - windowHours; h--) keys.push(seenBucketKey(prefix, trackerId, h, partition));
  return keys;
}

/** When the current bucket expires: `window` after the end of its hour. */
export function bucketExpiresAt(windowHours: number, nowMs: number): number {
  return (Math.floor(nowMs / BUCKET_MS) + 1 + windowHours) * BUCKET_MS;
}

/**
 * DEDUP_SCRIPT's ARGV for a job: when the current hour's set expires (ms since the epoch), how long
 * the duplicates list lives, the keyed records' markers as one string of MEMBER_BYTES each, and
 * their indices in the job, comma-separated, or '' when every record of the job is keyed. Two
 * arguments for the markers rather than two per record: each argument costs its framing, and the
 * client's and Redis's handling of it, on every write.
 */
export function dedupArgs(expiresAtMs: number, duplicatesTtlMs: number, members: readonly Buffer[], indices: readonly number[]): Array<string | Buffer> {
  const everyRecord = indices.every((index, i) => index === i);
  return [String(expiresAtMs), String(duplicatesTtlMs), Buffer.concat(members as Buffer[]), everyRecord ? '' : indices.join(',')];
}

/**
 * Marks a job's client-keyed records as seen and names the ones seen before. Runs in the same
 * script as the job's BullMQ add (src/ingest/keyed-add.ts), so a marker never exists without its record nor a record without
 * its marker. KEYS: duplicates list, current hour's set, older hours' sets (newest first).
 * ARGV: see dedupArgs. A key repeated within the call is a duplicate from its second occurrence.
 * Returns, per keyed record, 1 for a duplicate and 0 for a first sighting; the duplicates' job
 * indices are stored comma-separated in KEYS[1].
 *
 * The older hours are looked into only when one of them exists (one EXISTS for all), and then
 * each without asking first whether it exists (SMISMEMBER finds nothing in a missing set): each
 * call of Redis from Lua has a cost of its own, and a window of 24 hours names 24 older hours.
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
