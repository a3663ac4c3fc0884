import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type Koa from 'koa';
import { createApp } from './app';
import type { Config } from './config';
import type { Logger } from './logger';
import { createMetrics, type Metrics } from './metrics';
import { INGEST_QUEUE, type IngestJobData } from './queue/ingest-job';
import { IngestWriter } from './queue/ingest-writer';
import { createRedis } from './queue/redis';
import { RateLimiter } from './trackers/rate-limiter';
import { TrackerResolver } from './trackers/resolver';
import { TrackerStore } from './trackers/store';

export interface ApiRuntime {
  app: Koa;
  redis: Redis;
  queue: Queue<IngestJobData>;
  store: TrackerStore;
  resolver: TrackerResolver;
  writer: IngestWriter;
  metrics: Metrics;
  /** Flushes pending writes, then closes the queue and Redis. */
  close: () => Promise<void>;
}

/** Wires the HTTP edge to Redis. Listening is the caller's business (server.ts, or tests). */
export function createApiRuntime(config: Readonly<Config>, redisUrl: string, logger: Logger, metrics = createMetrics()): ApiRuntime {
  const redis = createRedis(redisUrl, 'producer');
  const queue = new Queue<IngestJobData>(INGEST_QUEUE, { connection: redis, prefix: config.redisPrefix });
  queue.on('error', (err) => logger.debug({ err: err.message }, 'ingest queue connection error'));
  const store = new TrackerStore(redis, config.redisPrefix);
  const resolver = new TrackerResolver(store, config.tokenCacheTtlMs);
  const writer = new IngestWriter(queue, {
    ...config.enqueue,
    retryAfterSeconds: config.retryAfterSeconds,
    isConnected: () => redis.status === 'ready',
    onFlush: (records, _jobs, seconds) => {
      metrics.enqueueSeconds.observe(seconds);
      metrics.enqueueBatchRecords.observe(records);
    },
  });
  const app = createApp({
    config,
    logger,
    metrics,
    resolver,
    writer,
    rateLimiter: new RateLimiter(),
    pingRedis: async () => {
      await redis.ping();
    },
  });
  return {
    app,
    redis,
    queue,
    store,
    resolver,
    writer,
    metrics,
    close: async () => {
      await writer.close();
      await queue.close();
      redis.disconnect();
    },
  };
}
