import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A key prefix no other test uses, so tests can share the machine's Redis. */
export function uniquePrefix(label = 'test'): string {
  return `t-${label}-${randomUUID().slice(0, 8)}`;
}

/** Deletes every key under the prefix (BullMQ's included). */
export async function deletePrefix(prefix: string, url = TEST_REDIS_URL): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    // With several shards, the relay-wide keys are under `{prefix}` and a shard's under `{prefix:n}` (src/core/redis/keyspace.ts).
    for (const pattern of [`${prefix}:*`, `{${prefix}}:*`, `{${prefix}:*`]) {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        cursor = next;
        if (keys.length > 0) await redis.del(...keys);
      } while (cursor !== '0');
    }
  } finally {
    redis.disconnect();
  }
}
