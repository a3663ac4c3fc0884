import type { RedisClient } from './cluster';
import type { Keyspace } from './keyspace';

/** Redis holds keys in another layout than the configuration asks for. */
export class KeyspaceLayoutError extends Error {
  override name = 'KeyspaceLayoutError';
}

/**
 * Makes sure Redis holds (or will hold) Tributary's keys in the layout the configuration asks for,
 * and records it on first use. The shard count decides where every queued record lives, so a relay
 * restarted with another `REDIS_SHARDS` would not see its own queues, cursors and dead letters:
 * that is refused, with what to do instead.
 */
export async function checkKeyspaceLayout(redis: RedisClient, keyspace: Keyspace): Promise<void> {
  const key = `${keyspace.global}:layout`;
  const wanted = `shards=${keyspace.shards}`;
  const stored = await redis.get(key);
  if (stored === wanted) return;
  if (stored !== null) {
    throw new KeyspaceLayoutError(
      `Redis holds Tributary data for REDIS_PREFIX ${keyspace.basePrefix} laid out in ${stored.replace('shards=', '')} shard(s), but REDIS_SHARDS is ${keyspace.shards}: ` +
        `records queued in the old layout would not be found. Start with REDIS_SHARDS=${stored.replace('shards=', '')}, or run the new shard count under a new REDIS_PREFIX and let this one drain.`,
    );
  }
  // With several shards the keys moved under `{prefix}`: data left under the one-shard names would be invisible.
  if (keyspace.shards > 1 && ((await redis.exists(`${keyspace.basePrefix}:trackers`)) === 1 || (await redis.get(`${keyspace.basePrefix}:layout`)) !== null)) {
    throw new KeyspaceLayoutError(
      `Redis holds Tributary data for REDIS_PREFIX ${keyspace.basePrefix} in the one-shard layout, but REDIS_SHARDS is ${keyspace.shards}: ` +
        `its trackers and queued records would not be found. Start with REDIS_SHARDS=1, or run the sharded relay under a new REDIS_PREFIX (trackers can be carried over with a config file, TRIBUTARY_CONFIG) and let this one drain.`,
    );
  }
  await redis.set(key, wanted, 'NX');
  // Another process may have recorded a different layout between the GET and the SET.
  if ((await redis.get(key)) !== wanted) return checkKeyspaceLayout(redis, keyspace);
}
