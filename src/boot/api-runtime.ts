import type { Queue } from 'bullmq';
import type { RedisClient } from '../core/redis/cluster';
import type Koa from 'koa';
import type { ConnectorRegistry } from '../../connectors/registry';
import type { AccessDeps, AdminDeps } from '../admin/deps';
import { createApp } from './app';
import { HistoryRecorder } from '../http/history/history-recorder';
import { TrafficCounter } from '../http/traffic/traffic-counter';
import { LiveFeed } from '../http/live/live-feed';
import type { Config } from '../core/config';
import { throttledErrorLog, type Logger } from '../core/logger';
import { createMetrics, registerDestinationMetrics, registerMemoryMetrics, type Metrics } from '../core/metrics';
import { readDestinationCounts } from '../../jobs/delivery/destination-counts';
import { MemoryBudget } from '../core/redis/memory-budget';
import type { IngestJobData } from '../../jobs/routing/ingest-job';
import { JobAdd } from '../ingest/job-add';
import { ingestQueues } from '../../jobs/routing/ingest-queues';
import { IngestWriter } from '../ingest/ingest-writer';
import { ImportLane } from '../../jobs/history/import-lane';
import { createRedisClient, pingEveryMaster, targetOf, whenConnected, type RedisLocation } from '../core/redis/cluster';
import { checkKeyspaceLayout } from '../core/redis/keyspace-layout';
import { DeliveryAdmin } from '../operator/delivery-admin';
import { RulesPreviewer } from '../operator/rules-preview';
import { DestinationService } from '../operator/destination-service';
import { RateLimiter } from '../ingest/rate-limiter';
import { TrackerResolver } from '../ingest/resolver';
import { watchTrackerChanges } from '../core/trackers/changes';
import { TrackerService } from '../operator/tracker-service';
import { TrackerStore } from '../core/trackers/store';
import { keyFileOf, type KeyFileKeyring } from '../core/secrets/key-file';
import { SourceDeliveryLog } from '../core/trackers/source-deliveries';
import { SourceService } from '../operator/source-service';
import { RequestHistory } from '../core/requests/request-history';
import { TrafficReader } from '../core/series/traffic';
import { AccessService } from '../operator/access-service';
import { SessionStore } from '../core/access/session-store';
import { LoginLimiter } from '../core/access/login-limiter';
import { Authenticator } from '../core/access/authenticate';
import { AuditLog } from '../core/access/audit-log';

/** Turns the admin API on. */
export interface AdminOptions {
  /** The admin token (see src/admin/admin-token.ts). */
  token: string;
  /** Connectors whose settings schemas check destinations, and which `test` opens. */
  registry: ConnectorRegistry;
}

export interface ApiRuntime {
  app: Koa;
  redis: RedisClient;
  /** The ingest queue of each shard, by shard. */
  queues: Array<Queue<IngestJobData>>;
  store: TrackerStore;
  resolver: TrackerResolver;
  writer: IngestWriter;
  metrics: Metrics;
  /** Redis memory, sampled every REDIS_MEMORY_SAMPLE_MS; ingest is refused at its high watermark. */
  memory: MemoryBudget;
  /** The services behind the admin API, when it is on. */
  admin: AdminDeps | undefined;
  live: LiveFeed;
  /** Each tracker's records per minute, counted in process and sent to Redis every TRAFFIC_FLUSH_MS. */
  traffic: TrafficCounter;
  /** Flushes pending writes, then closes the queue and Redis. */
  close: () => Promise<void>;
}

/** What an API process adds to its configuration. */
export interface ApiRuntimeOptions {
  /** Default: a registry of this process's own. */
  metrics?: Metrics;
  /** Turns the admin API on. */
  admin?: AdminOptions;
  /** What /metrics serves, when not this process's registry alone (cluster mode: src/boot/cluster-metrics.ts). */
  hostMetrics?: () => Promise<string>;
  /** The keys of the secrets in Redis (src/boot/secrets-keys.ts). Default: the key file the configuration names, read when first needed. */
  keys?: KeyFileKeyring;
}

/**
 * Wires the HTTP edge to Redis, once Redis serves every master (nothing is built on a connection
 * still opening: see whenConnected) and holds the configured keyspace layout. Listening is the
 * caller's business (server.ts, or tests).
 */
export async function openApiRuntime(config: Readonly<Config>, redisLocation: RedisLocation, logger: Logger, options: ApiRuntimeOptions = {}): Promise<ApiRuntime> {
  const redis = createRedisClient(targetOf(redisLocation), 'producer');
  try {
    await whenConnected(redis, (pending) => logger.warn({ pending }, 'waiting for Redis before serving'));
    await checkKeyspaceLayout(redis, config.keyspace);
  } catch (err) {
    redis.disconnect();
    throw err;
  }
  const runtime = createApiRuntime(config, redisLocation, redis, logger, options);
  await Promise.all(runtime.queues.map((q) => q.waitUntilReady()));
  return runtime;
}

function createApiRuntime(config: Readonly<Config>, redisLocation: RedisLocation, redis: RedisClient, logger: Logger, { metrics = createMetrics(), admin: adminOptions, hostMetrics, keys = keyFileOf(config) }: ApiRuntimeOptions): ApiRuntime {
  const queues = ingestQueues(redis, config.keyspace);
  const queueError = throttledErrorLog(logger, 'ingest queue connection');
  for (const queue of queues) queue.on('error', queueError);
  const store = new TrackerStore(redis, config.redisPrefix, keys);
  const memory = new MemoryBudget(redis, logger.child({ component: 'memory' }), config.memory).start();
  registerMemoryMetrics(metrics, () => memory.snapshot());
  registerDestinationMetrics(metrics, () => readDestinationCounts(redis, store, config.keyspace));
  const resolver = new TrackerResolver(store, config.tokenCacheTtlMs);
  // A change made by any process (CLI, console, config file) reaches this one's caches at once.
  const changesSubscriber = createRedisClient(targetOf(redisLocation), 'worker');
  watchTrackerChanges(changesSubscriber, config.redisPrefix, () => resolver.clear()).catch((err: unknown) => logger.warn({ err: (err as Error).message }, 'tracker changes: not watched; caches expire by themselves'));
  const writer = new IngestWriter(queues.map((queue) => new JobAdd(queue)), {
    ...config.enqueue,
    connection: redis,
    retryAfterSeconds: config.retryAfterSeconds,
    keyspace: config.keyspace,
    isConnected: () => redis.status === 'ready',
    memory,
    onFlush: (records, _jobs, seconds) => {
      metrics.enqueueSeconds.observe(seconds);
      metrics.enqueueBatchRecords.observe(records);
    },
  });
  const live = new LiveFeed({ redis, redisLocation, redisPrefix: config.redisPrefix, resolver, logger });
  const history = new HistoryRecorder({ redis, redisPrefix: config.redisPrefix, resolver, ...config.history, writeTimeoutMs: config.enqueue.timeoutMs, onError: throttledErrorLog(logger, 'request history') });
  const traffic = new TrafficCounter({ redis, redisPrefix: config.redisPrefix, resolver, flushMs: config.trafficFlushMs, isConnected: () => redis.status === 'ready', writeTimeoutMs: config.enqueue.timeoutMs, onError: throttledErrorLog(logger, 'traffic counts') });
  const deliveryLog = new SourceDeliveryLog(redis, config.redisPrefix, undefined, throttledErrorLog(logger, 'webhook delivery log'));
  const admin = adminOptions && createAdminDeps(config, redis, store, logger, adminOptions, live, deliveryLog, memory);
  const app = createApp({
    config,
    logger,
    metrics,
    resolver,
    writer,
    rateLimiter: new RateLimiter(Date.now, config.apiProcesses),
    pingRedis: () => pingEveryMaster(redis),
    memory: () => memory.snapshot(),
    admin,
    live,
    history,
    traffic,
    deliveryLog,
    hostMetrics,
    // Imports wait while Redis is past the high watermark, as live ingest is refused there.
    importSink: new ImportLane(redis, config.keyspace, { memoryFull: () => memory.snapshot().state === 'full' }),
  });
  return {
    app,
    redis,
    queues,
    store,
    resolver,
    writer,
    metrics,
    memory,
    admin,
    live,
    traffic,
    close: async () => {
      memory.stop();
      changesSubscriber.disconnect();
      await live.close();
      await writer.close();
      await history.flush();
      await traffic.flush();
      await Promise.all(queues.map((q) => q.close()));
      redis.disconnect();
    },
  };
}

/** People, sessions, tokens, the audit log, and the break-glass admin token (docs/access.md). */
function createAccessDeps(config: Readonly<Config>, redis: RedisClient, adminToken: string): AccessDeps {
  const service = new AccessService(redis, config.redisPrefix, config.publicUrl);
  const sessions = new SessionStore(redis, config.redisPrefix, config.sessions);
  return {
    service,
    sessions,
    sessionLimits: config.sessions,
    limiter: new LoginLimiter(redis, config.redisPrefix),
    authenticator: new Authenticator({ people: service.people, sessions, tokens: service.tokens, breakGlass: service.breakGlass, adminToken }),
    audit: new AuditLog(redis, config.redisPrefix, config.audit),
  };
}

/** The services of the CLI (src/cli/context.ts) over this process's Redis connection and store. */
function createAdminDeps(config: Readonly<Config>, redis: RedisClient, store: TrackerStore, logger: Logger, options: AdminOptions, live: LiveFeed, deliveryLog: SourceDeliveryLog, memory: MemoryBudget): AdminDeps {
  const destinations = new DestinationService(store, options.registry, config.dataDir, logger);
  return {
    access: createAccessDeps(config, redis, options.token),
    publicUrl: config.publicUrl,
    trackers: new TrackerService(store),
    destinations,
    delivery: new DeliveryAdmin({ destinations, trackers: store, redis, keyspace: config.keyspace, dataDir: config.dataDir, warehouse: config.warehouse }),
    preview: new RulesPreviewer({ destinations, redis, keyspace: config.keyspace }),
    sources: new SourceService(store, undefined, deliveryLog),
    connectors: options.registry,
    live,
    memory: () => memory.snapshot(),
    requests: new RequestHistory(redis, config.redisPrefix),
    traffic: new TrafficReader(redis, config.redisPrefix),
  };
}
