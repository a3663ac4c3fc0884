import { createDefaultRegistry } from '../../connectors';
import { startWorkerRuntime, type WorkerRuntime } from '../../jobs/worker-runtime';
import { listenApi } from './api-server';
import { startApiChildren, type ApiChildren } from './cluster-children';
import { createHostMetricsClient, serveHostMetrics } from './cluster-metrics';
import type { Config } from '../core/config';
import { openRedisEndpoint } from '../core/redis/endpoint';
import { prepareTrackers, resolveAdminToken } from './host-setup';
import { AuditLog } from '../core/access/audit-log';
import type { Logger } from '../core/logger';
import { createMetrics } from '../core/metrics';
import { createRedisClient } from '../core/redis/cluster';
import { openApiRuntime } from './api-runtime';
import { exitOnStopSignal } from './stop-signal';
import { TrackerStore } from '../core/trackers/store';
import { keyFileOf } from '../core/secrets/key-file';
import { prepareSecrets, watchSecretsKeys } from './secrets-keys';

/**
 * Cluster mode (API_PROCESSES > 1): the primary does the once-per-host work, namely Redis (the
 * embedded one included), the admin token, TRIBUTARY_CONFIG, the demo tracker and, for role
 * `all`, the delivery workers, and forks the API processes. They only serve HTTP.
 */
export async function runClusterPrimary(role: 'all' | 'api', config: Readonly<Config>, logger: Logger): Promise<void> {
  const redis = await openRedisEndpoint(config);
  if (redis.owned) logger.info({ url: redis.description, dir: `${config.dataDir}/redis` }, 'started the embedded redis-server (append-only persistence on)');
  let children: ApiChildren | undefined;
  let worker: WorkerRuntime | undefined;
  let stopWatchingKeys: () => void = () => undefined;
  try {
    const registry = createDefaultRegistry().loadAll();
    // Before any API process forks: the key file made (first start) and every stored secret opening with it.
    const keys = keyFileOf(config);
    await prepareSecrets(redis.target, config, keys, logger);
    const token = await resolveAdminToken(config, logger);
    // Commands wait for the connection (as the API's queue waits for Redis in one-process mode).
    const commands = createRedisClient(redis.target, 'worker');
    try {
      await prepareTrackers(new TrackerStore(commands, config.redisPrefix, keys), config, registry, logger, new AuditLog(commands, config.redisPrefix, config.audit));
    } finally {
      commands.disconnect();
    }
    // Through the environment, so that no child starts a second redis-server or makes another token.
    // A cluster's children read REDIS_CLUSTER_NODES from the environment they inherit.
    const env = { ...(redis.target.redisUrl ? { REDIS_URL: redis.target.redisUrl } : {}), ADMIN_TOKEN: token };
    serveHostMetrics(() => children?.listening() ?? []);
    children = await startApiChildren({ processes: config.apiProcesses, env, logger });
    logger.info({ url: config.publicUrl, processes: config.apiProcesses }, 'tributary API listening');
    if (role === 'all') {
      worker = await startWorkerRuntime(config, redis.target, registry, logger, { keys });
      stopWatchingKeys = watchSecretsKeys(keys, worker.store, logger);
      logger.info({ connectors: registry.types() }, 'tributary workers delivering');
    }
  } catch (err) {
    await children?.stop();
    await redis.stop();
    throw err;
  }
  exitOnStopSignal(logger, config.shutdownTimeoutMs, async () => {
    stopWatchingKeys();
    // The children's writes need Redis, the workers do not need the children: both stop at once, Redis last.
    await Promise.all([children!.stop(), worker?.close()]);
    await redis.stop();
  });
}

/** An API process of cluster mode: the HTTP edge on the shared port, nothing else. */
export async function runClusterChild(config: Readonly<Config>, logger: Logger): Promise<void> {
  if ((!config.redisUrl && !config.redisCluster) || !config.adminToken) throw new Error('an API process of cluster mode gets REDIS_URL (or REDIS_CLUSTER_NODES) and ADMIN_TOKEN from its primary');
  const metrics = createMetrics();
  const hostMetrics = createHostMetricsClient(metrics.registry);
  const keys = keyFileOf(config);
  const api = await openApiRuntime(config, { redisUrl: config.redisUrl, redisCluster: config.redisCluster }, logger, { metrics, admin: { token: config.adminToken, registry: createDefaultRegistry().loadAll() }, hostMetrics, keys });
  const stopWatchingKeys = watchSecretsKeys(keys, api.store, logger);
  const server = await listenApi(api.app, config);
  exitOnStopSignal(logger, config.shutdownTimeoutMs, async () => {
    stopWatchingKeys();
    await server.close();
    await api.close();
  });
}
