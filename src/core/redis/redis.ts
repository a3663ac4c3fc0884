import { Redis, type RedisOptions } from 'ioredis';

export type RedisRole = 'producer' | 'worker';

/**
 * A producer fails fast: no offline queue and one retry, so a request never waits on a Redis
 * that is down (it answers 503 instead). It never re-sends a command that was in flight when the
 * connection dropped (ioredis does by default): Redis may have run it already, and a second
 * enqueue would store the records twice; the request is answered 503 and the client's retry is
 * deduplicated by its keys. A worker blocks and waits forever, as BullMQ requires.
 * Both reconnect by themselves with a capped backoff.
 */
export function createRedis(url: string, role: RedisRole, extra: RedisOptions = {}): Redis {
  const common: RedisOptions = {
    lazyConnect: false,
    retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 6), 2000),
    ...extra,
  };
  const options: RedisOptions =
    role === 'producer'
      ? { ...common, enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2000, autoResendUnfulfilledCommands: false }
      : { ...common, enableOfflineQueue: true, maxRetriesPerRequest: null };
  const redis = new Redis(url, options);
  // ioredis emits 'error' on every failed reconnect; without a listener Node would crash the process.
  redis.on('error', () => undefined);
  return redis;
}
