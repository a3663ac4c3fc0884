import calculateSlot from 'cluster-key-slot';
import { Redis } from 'ioredis';
import { Keyspace, partitionKey, partitionOf } from '../../src/core/redis/keyspace';
import { checkKeyspaceLayout, KeyspaceLayoutError } from '../../src/core/redis/keyspace-layout';
import { loadConfig, ConfigError } from '../../src/core/config';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis';

describe('Keyspace', () => {
  test('one shard keeps every key under the prefix as given', () => {
    const ks = new Keyspace('tributary', 1);
    expect(ks.global).toBe('tributary');
    expect(ks.shardPrefix(0)).toBe('tributary');
    expect(ks.prefixOf({ trackerId: 'shop', partition: 0 })).toBe('tributary');
  });

  test('several shards: one hash tag each, their slots spread evenly over the 16 384', () => {
    const ks = new Keyspace('tributary', 16);
    expect(ks.global).toBe('{tributary}');
    const slots = Array.from({ length: 16 }, (_, s) => calculateSlot(`${ks.shardPrefix(s)}:anything`));
    // Shard s's slot lies in the s-th sixteenth: a cluster of N masters with contiguous ranges gets about 16/N each.
    slots.forEach((slot, s) => expect(Math.floor(slot / 1024)).toBe(s));
    // Every key of a shard is in its slot, whatever follows the prefix.
    expect(calculateSlot(`${ks.shardPrefix(3)}:dest:shop:wh:stream`)).toBe(slots[3]);
    expect(() => ks.shardPrefix(16)).toThrow(RangeError);
  });

  test('a tracker partition always maps to the same shard, and partitions spread', () => {
    const ks = new Keyspace('tributary', 8);
    const shards = new Set(Array.from({ length: 64 }, (_, partition) => ks.shardOf({ trackerId: 'shop', partition })));
    expect(shards.size).toBeGreaterThan(4);
    expect(ks.shardOf({ trackerId: 'shop', partition: 5 })).toBe(new Keyspace('tributary', 8).shardOf({ trackerId: 'shop', partition: 5 }));
  });

  test('a prefix with its own hash tag is refused with several shards, by the config too', () => {
    expect(() => new Keyspace('{tributary}', 4)).toThrow(/may not hold a hash tag/);
    expect(() => loadConfig({ REDIS_PREFIX: '{tributary}', REDIS_SHARDS: '4' })).toThrow(ConfigError);
    expect(() => loadConfig({ REDIS_PREFIX: '{tributary}', REDIS_SHARDS: '4' })).toThrow(/set REDIS_PREFIX=tributary/);
    expect(loadConfig({ REDIS_PREFIX: '{tributary}' }).redisPrefix).toBe('{tributary}');
    expect(() => loadConfig({ REDIS_SHARDS: '0' })).toThrow(/REDIS_SHARDS/);
    expect(() => loadConfig({ REDIS_SHARDS: '257' })).toThrow(/REDIS_SHARDS/);
  });

  test('records are partitioned by _uid (users), _sid (sessions), _uid/_sid/_id (events)', () => {
    expect(partitionKey({ kind: 'user', id: 'k', uid: 'u1' })).toBe('u1');
    expect(partitionKey({ kind: 'session', id: 'k', uid: 'u1', sid: 's1' })).toBe('s1');
    expect(partitionKey({ kind: 'event', id: 'k', uid: 'u1', sid: 's1' })).toBe('u1');
    expect(partitionKey({ kind: 'event', id: 'k', sid: 's1' })).toBe('s1');
    expect(partitionKey({ kind: 'event', id: 'k' })).toBe('k');
    expect(partitionOf({ kind: 'user', id: 'a', uid: 'u1' }, 1)).toBe(0);
    // A user's update and its events share a partition.
    expect(partitionOf({ kind: 'user', id: 'a', uid: 'u1' }, 16)).toBe(partitionOf({ kind: 'event', id: 'b', uid: 'u1' }, 16));
    const spread = new Set(Array.from({ length: 200 }, (_, i) => partitionOf({ kind: 'user', id: 'x', uid: `user-${i}` }, 8)));
    expect(spread.size).toBe(8);
  });
});

describe('the recorded layout', () => {
  const prefix = uniquePrefix('layout');
  const redis = new Redis(TEST_REDIS_URL);
  afterAll(async () => {
    await deletePrefix(prefix);
    redis.disconnect();
  });

  test('is recorded on first use; another shard count is refused with what to do', async () => {
    await checkKeyspaceLayout(redis, new Keyspace(prefix, 4));
    await checkKeyspaceLayout(redis, new Keyspace(prefix, 4));
    expect(await redis.get(`{${prefix}}:layout`)).toBe('shards=4');
    const refusal = checkKeyspaceLayout(redis, new Keyspace(prefix, 8));
    await expect(refusal).rejects.toThrow(KeyspaceLayoutError);
    await expect(checkKeyspaceLayout(redis, new Keyspace(prefix, 8))).rejects.toThrow(/laid out in 4 shard\(s\), but REDIS_SHARDS is 8.*Start with REDIS_SHARDS=4/);
  });

  test('data in the one-shard layout is not silently left behind by a sharded start', async () => {
    const old = `${prefix}-old`;
    await redis.sadd(`${old}:trackers`, 'shop');
    try {
      await expect(checkKeyspaceLayout(redis, new Keyspace(old, 4))).rejects.toThrow(/one-shard layout, but REDIS_SHARDS is 4/);
      await checkKeyspaceLayout(redis, new Keyspace(old, 1));
      expect(await redis.get(`${old}:layout`)).toBe('shards=1');
    } finally {
      await deletePrefix(old);
    }
  });
});
