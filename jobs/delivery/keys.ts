import type { Keyspace, PartitionRef } from '../../src/core/redis/keyspace';

/**
 * Redis keys of the delivery stage. `prefix` is the prefix of the shard that holds the tracker
 * partition (Keyspace.prefixOf), so that all of a partition's keys share one Redis Cluster slot,
 * as the Lua scripts need. Partition 0 keeps the names keys had before trackers had partitions.
 */
export interface DestinationRef {
  trackerId: string;
  destinationId: string;
  /** The tracker partition; 0 when absent. */
  partition?: number;
}

/** `:p<n>` after a partition's names, nothing for partition 0. */
function partitionSuffix(partition: number | undefined): string {
  return partition ? `:p${partition}` : '';
}

export function destinationKey(prefix: string, ref: DestinationRef): string {
  return `${prefix}:dest:${ref.trackerId}:${ref.destinationId}${partitionSuffix(ref.partition)}`;
}

/** The delivery keys of a destination's partition, under the prefix of the shard that holds it. */
export function partitionDeliveryKeys(keyspace: Keyspace, ref: DestinationRef): DeliveryKeys {
  return deliveryKeys(keyspace.prefixOf({ trackerId: ref.trackerId, partition: ref.partition ?? 0 }), ref);
}

export function deliveryKeys(prefix: string, ref: DestinationRef) {
  const base = destinationKey(prefix, ref);
  return {
    /** Records waiting for this destination, in accepted order (a Redis stream). */
    stream: `${base}:stream`,
    /** Id of the last stream entry the destination has confirmed. */
    cursor: `${base}:cursor`,
    /** Held by the one process that delivers this destination. */
    lock: `${base}:lock`,
    /** Records the destination refused for good, with the reason (a Redis stream). */
    deadLetters: `${base}:dlq`,
    /** Counters and the last error, for status views. */
    status: `${base}:status`,
    /** Id of the last record moved to the disk spool (jobs/spill/spool.ts); the records up to it are on disk. */
    spilled: `${base}:spilled`,
    /** Records waiting in the stream (an entry may hold a block of many, see stream-entries.ts). */
    queued: `${base}:queued`,
    /** Start of the keys of its pictures over time: one hash per 10 minutes, `<series>:<bucket>` (destination-series.ts). */
    series: `${base}:series`,
    /** The moments it paused, failed, recovered, was disabled or enabled, newest first (a capped list). */
    events: `${base}:events`,
    /**
     * History sent to this destination (backfills, jobs/history/backfill.ts), through its rules: a stream
     * of blocks, delivered only while the live stream has nothing to deliver.
     */
    history: `${base}:history`,
    /** Id of the last history record the destination has confirmed. */
    historyCursor: `${base}:history:cursor`,
    /** Records waiting in the history stream. */
    historyQueued: `${base}:history:queued`,
    /** The backfill of this destination partition, under way or last finished (a hash). */
    backfill: `${base}:backfill`,
  };
}

export type DeliveryKeys = ReturnType<typeof deliveryKeys>;

/**
 * Records of a tracker that had no destination when they were routed (a Redis stream). They go,
 * oldest first, to the destinations the tracker has next.
 */
export function trackerBacklogKey(prefix: string, trackerId: string, partition = 0): string {
  return `${prefix}:backlog:${trackerId}${partitionSuffix(partition)}`;
}

/**
 * The archive of a tracker partition (jobs/history/archiver.ts): what it accepted, as accepted, on its way
 * to disk. The router adds each routing step's records to `stream` in the routing script; the
 * archiver moves them to frames on disk and trims the stream, keeping in `archived` the last record
 * id on disk (Redis is the judge of what the files hold, as for the spool).
 */
export function archiveKeys(prefix: string, trackerId: string, partition = 0) {
  const base = `${prefix}:archive:${trackerId}${partitionSuffix(partition)}`;
  return {
    stream: base,
    /** Id of the last record on disk. */
    archived: `${base}:archived`,
    /** Held by the one process that archives this tracker partition. */
    lock: `${base}:lock`,
    /** What the files hold: records, bytes, the oldest id, the archiver's last error. */
    status: `${base}:status`,
  };
}

export type ArchiveKeys = ReturnType<typeof archiveKeys>;

/** The last routing steps of a tracker partition, records as accepted, for previews of destination rules (a capped stream). */
export function recentRecordsKey(prefix: string, trackerId: string, partition = 0): string {
  return `${prefix}:recent:${trackerId}${partitionSuffix(partition)}`;
}

/**
 * The tracker partitions of a shard that have a backlog (a Redis set of `backlogMember`s). A
 * tracker id holds no `/`, so the member of partition 0 is the tracker id as it always was.
 */
export function backlogIndexKey(prefix: string): string {
  return `${prefix}:backlogs`;
}

export function backlogMember(ref: PartitionRef): string {
  return ref.partition === 0 ? ref.trackerId : `${ref.trackerId}/${ref.partition}`;
}

export function parseBacklogMember(member: string): PartitionRef {
  const slash = member.indexOf('/');
  return slash < 0 ? { trackerId: member, partition: 0 } : { trackerId: member.slice(0, slash), partition: Number(member.slice(slash + 1)) };
}

/** The id of the last ingest job of a shard the router fanned out; a shard's jobs are routed strictly in id order. */
export function routerCursorKey(prefix: string): string {
  return `${prefix}:router:last-job`;
}

/** Milliseconds part of a stream id (`<ms>-<seq>`, or a record's `<ms>-<seq>#<k>`): when the entry was added. */
export function streamIdTime(id: string): number {
  return Number(id.slice(0, id.indexOf('-')));
}

/** Parts of a record id: the stream entry's (ms, seq) and the record's place in the entry's block. */
function idParts(id: string): [bigint, bigint, number] {
  const hash = id.indexOf('#');
  const entry = hash < 0 ? id : id.slice(0, hash);
  const dash = entry.indexOf('-');
  return [BigInt(entry.slice(0, dash)), BigInt(entry.slice(dash + 1)), hash < 0 ? 0 : Number(id.slice(hash + 1))];
}

/** Record ids compare by (ms, seq) of their entry, then by their place in its block. */
export function compareStreamIds(a: string, b: string): number {
  const [am, as, ak] = idParts(a);
  const [bm, bs, bk] = idParts(b);
  if (am !== bm) return am < bm ? -1 : 1;
  if (as !== bs) return as < bs ? -1 : 1;
  return ak === bk ? 0 : ak < bk ? -1 : 1;
}

/** The stream entry a record id belongs to. */
export function entryIdOf(recordId: string): string {
  const hash = recordId.indexOf('#');
  return hash < 0 ? recordId : recordId.slice(0, hash);
}

/** The stream id right after `id`, for XTRIM MINID (which keeps ids ≥ its threshold). */
export function nextStreamId(id: string): string {
  const [ms, seq] = id.split('-');
  return `${ms}-${BigInt(seq ?? '0') + 1n}`;
}

/**
 * Lua: makes sure a destination's record count exists. A stream written before counts were kept
 * holds one record an entry, so its length is its count.
 */
export const ENSURE_COUNT = `
local function ensureCount(stream, counter)
  if redis.call('EXISTS', counter) == 0 then redis.call('SET', counter, redis.call('XLEN', stream)) end
end`;
