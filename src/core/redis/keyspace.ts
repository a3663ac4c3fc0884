/// <reference path="./cluster-key-slot.d.ts" />
import calculateSlot from 'cluster-key-slot';

/** Redis Cluster's hash slots. */
const SLOTS = 16384;
/** Most shards a relay may have: each is a BullMQ queue with its own routing worker in every worker process. */
export const MAX_SHARDS = 256;
/** Most partitions a tracker may have. */
export const MAX_PARTITIONS = 64;

/** One tracker partition: the unit that is routed and delivered in order. Partition 0 is a tracker's only one by default. */
export interface PartitionRef {
  trackerId: string;
  partition: number;
}

/**
 * Where Tributary's keys live. Relay-wide keys (trackers, tokens, history, the live view) are under
 * `global`; everything a record passes through on its way to a destination — the ingest queue,
 * deduplication markers, the router's cursor, destination streams, leases, cursors, dead letters —
 * is under the prefix of a *shard*. Every tracker partition belongs to one shard, so its keys share
 * one hash tag and its Lua scripts stay within one Redis Cluster slot, while different partitions
 * spread over the shards and so over the cluster's masters.
 *
 * With one shard (the default) the layout is the historical one: every key under the prefix as
 * given. With several, the prefix may not hold a hash tag: the global keys are under `{prefix}` and
 * shard `s` under `{prefix:s…}`, whose tags are chosen so that the shards' slots spread evenly over
 * the 16 384 slots, and so over masters that each own a contiguous range of them.
 *
 * A shard holds many partitions rather than one tag per partition: each shard is one BullMQ queue,
 * and every worker process keeps a blocking connection per queue it routes, so the shard count, not
 * the tracker count, bounds a worker's connections.
 */
export class Keyspace {
  readonly global: string;
  private readonly prefixes: string[];

  constructor(
    readonly basePrefix: string,
    readonly shards: number,
  ) {
    if (!Number.isInteger(shards) || shards < 1 || shards > MAX_SHARDS) throw new RangeError(`a keyspace has 1 to ${MAX_SHARDS} shards, not ${shards}`);
    if (shards === 1) {
      this.global = basePrefix;
      this.prefixes = [basePrefix];
      return;
    }
    if (/[{}]/.test(basePrefix)) throw new RangeError(`with several shards the prefix may not hold a hash tag ({…}): Tributary tags each shard's keys itself; "${basePrefix}" would put them all in one slot`);
    this.global = `{${basePrefix}}`;
    this.prefixes = Array.from({ length: shards }, (_, s) => `{${evenTag(basePrefix, s, shards)}}`);
  }

  /** The prefix of shard `s`'s keys. */
  shardPrefix(shard: number): string {
    const prefix = this.prefixes[shard];
    if (prefix === undefined) throw new RangeError(`shard ${shard} is not one of the ${this.shards}`);
    return prefix;
  }

  /** The shard a tracker partition belongs to. */
  shardOf(ref: PartitionRef): number {
    return this.shards === 1 ? 0 : calculateSlot(`${ref.trackerId}/${ref.partition}`) % this.shards;
  }

  /** The prefix of a tracker partition's keys. */
  prefixOf(ref: PartitionRef): string {
    return this.prefixes[this.shardOf(ref)]!;
  }
}

/**
 * `prefix:s` with, when needed, a suffix (`prefix:s.k`, the smallest k) that puts its slot in the
 * s-th of `shards` equal ranges of slots.
 */
function evenTag(prefix: string, shard: number, shards: number): string {
  const from = Math.floor((shard * SLOTS) / shards);
  const to = Math.floor(((shard + 1) * SLOTS) / shards);
  const plain = `${prefix}:${shard}`;
  const inRange = (tag: string) => {
    const slot = calculateSlot(tag);
    return slot >= from && slot < to;
  };
  if (inRange(plain)) return plain;
  for (let k = 0; ; k++) if (inRange(`${plain}.${k}`)) return `${plain}.${k}`;
}

/**
 * The key a record is partitioned by: `_uid` for users, `_sid` for sessions, and for events the
 * first of `_uid`, `_sid`, `_id` it has. Updates of one user or session thus stay in one partition,
 * and in the order they were accepted.
 */
export function partitionKey(record: { kind: string; id: string; uid?: string; sid?: string }): string {
  if (record.kind === 'user') return record.uid ?? record.id;
  if (record.kind === 'session') return record.sid ?? record.id;
  return record.uid ?? record.sid ?? record.id;
}

/** The partition of a record of a tracker with `partitions` partitions. */
export function partitionOf(record: { kind: string; id: string; uid?: string; sid?: string }, partitions: number): number {
  return partitions <= 1 ? 0 : calculateSlot(partitionKey(record)) % partitions;
}
