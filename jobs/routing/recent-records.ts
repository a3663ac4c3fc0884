import type { RedisClient } from '../../src/core/redis/cluster';
import type { Keyspace } from '../../src/core/redis/keyspace';
import { parseExactJson } from '../../src/core/records/exact-json';
import type { TrackedRecord } from '../../src/core/records/types';
import { recentRecordsKey } from '../delivery/keys';
import { entryRecords } from './stream-entries';

/**
 * The records a tracker accepted last, as accepted (before any destination's rules), from the
 * capped streams the router keeps per tracker partition (RECENT_STEPS routing steps each, see
 * jobs/routing/destination-blocks.ts). For previews of rules on real traffic: nothing here is kept for long.
 */
export async function recentRecords(redis: RedisClient, keyspace: Keyspace, trackerId: string, partitions: number, limit: number): Promise<TrackedRecord[]> {
  const perPartition = await Promise.all(
    Array.from({ length: partitions }, async (_, partition) => {
      const key = recentRecordsKey(keyspace.prefixOf({ trackerId, partition }), trackerId, partition);
      // Newest steps first, until `limit` records are in hand.
      const entries = (await redis.xrevrangeBuffer(key, '+', '-')) as Array<[Buffer, Buffer[]]>;
      const out: TrackedRecord[] = [];
      for (const [id, fields] of entries) {
        const records = entryRecords(id.toString(), fields);
        for (let i = records.length - 1; i >= 0 && out.length < limit; i--) out.push(parseExactJson(records[i]!.json) as TrackedRecord);
        if (out.length >= limit) break;
      }
      return out;
    }),
  );
  // Partitions interleave by when each record was received; within one, newest first as read.
  return perPartition
    .flat()
    .sort((a, b) => b.receivedAt.localeCompare(a.receivedAt))
    .slice(0, limit)
    .reverse();
}
