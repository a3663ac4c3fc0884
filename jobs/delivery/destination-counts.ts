import type { RedisClient } from '../../src/core/redis/cluster';
import type { Keyspace } from '../../src/core/redis/keyspace';
import type { DestinationCountsRow } from '../../src/core/metrics';
import type { TrackerStore } from '../../src/core/trackers/store';
import { partitionDeliveryKeys } from './keys';

const FIELDS = ['delivered', 'filtered', 'sampled', 'filterErrors'] as const;

/** Every destination's running counts (delivered, skipped by its rules) summed over its tracker's partitions, read from the status hashes, for /metrics. */
export async function readDestinationCounts(redis: RedisClient, store: TrackerStore, keyspace: Keyspace): Promise<DestinationCountsRow[]> {
  const { trackers } = await store.list();
  const wanted = trackers.flatMap((t) => t.destinations.map((d) => ({ t, d })));
  return Promise.all(
    wanted.map(async ({ t, d }) => {
      const parts = await Promise.all(
        Array.from({ length: t.partitions }, (_, partition) => redis.hmget(partitionDeliveryKeys(keyspace, { trackerId: t.id, destinationId: d.id, partition }).status, ...FIELDS)),
      );
      const sum = (i: number) => parts.reduce((n, values) => n + Number(values[i] ?? 0), 0);
      return { trackerId: t.id, destinationId: d.id, type: d.type, delivered: sum(0), filtered: sum(1), sampled: sum(2), filterErrors: sum(3) };
    }),
  );
}
