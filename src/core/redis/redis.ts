import { Redis, type RedisOptions } from 'ioredis';
import { sendLargeArgumentsAsBuffers } from './large-arguments';

export type RedisRole = 'producer' | 'worker';

/** Delay before the next reconnect attempt: doubles from 100 ms, capped at 2 s. */
export function reconnectDelay(times: number): number {
  return Math.min(50 * 2 ** Math.min(times, 6), 2000);
}

/**
 * A producer fails fast: no offline queue and one retry, so a request never waits on a Redis
 * that is down (it answers 503 instead). It never re-sends a command that was in flight when the
 * connection dropped (ioredis does by default): Redis may have run it already, and a second
 * enqueue would store the records twice; the request is answered 503 and the client's retry is
 * deduplicated by its keys. A worker blocks and waits forever, as BullMQ requires.
 */
export function roleOptions(role: RedisRole): RedisOptions {
  return role === 'producer'
    ? { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2000, autoResendUnfulfilledCommands: false }
    : { enableOfflineQueue: true, maxRetriesPerRequest: null };
}

/** A connection to one Redis in the role's manner (see roleOptions); it reconnects by itself with a capped backoff. */
export function createRedis(url: string, role: RedisRole, extra: RedisOptions = {}): Redis {
  const redis = sendLargeArgumentsAsBuffers(new Redis(url, { lazyConnect: false, retryStrategy: reconnectDelay, ...extra, ...roleOptions(role) }));
  // ioredis emits 'error' on every failed reconnect; without a listener Node would crash the process.
  redis.on('error', () => undefined);
  return redis;
}
