import cluster from 'node:cluster';
import { createDefaultRegistry } from '../../connectors';
import { startWorkerRuntime, type WorkerRuntime } from '../../jobs/worker-runtime';
import { listenApi, type ApiServer } from './api-server';
import { runClusterChild, runClusterPrimary } from './cluster';
import { loadConfig, type Config } from '../core/config';
import { openRedisEndpoint } from '../core/redis/endpoint';
import { prepareTrackers, resolveAdminToken } from './host-setup';
import { AuditLog } from '../core/access/audit-log';
import { createLogger, type Logger } from '../core/logger';
import { openApiRuntime, type ApiRuntime } from './api-runtime';
import { exitOnStopSignal } from './stop-signal';
import { keyFileOf } from '../core/secrets/key-file';
import { prepareSecrets, watchSecretsKeys } from './secrets-keys';
import { startDeliveryThread, type DeliveryThread } from './delivery-thread';
import { historyHeldBackBy, LoopDelayWatch, loopDelayReader } from '../core/loop-delay';

/** `all` (npm start): API and workers in one process. `api` and `worker` run one half each, for scale-out. */
type Role = 'all' | 'api' | 'worker';

function parseRole(arg: string | undefined): Role {
  if (arg === undefined || arg === 'all' || arg === 'api' || arg === 'worker') return arg ?? 'all';
  throw new Error(`unknown role "${arg}": use all, api or worker`);
}

/** API_PROCESSES=1 (the default): everything the role needs in this one process, no cluster. */
async function runOneProcess(role: Role, config: Readonly<Config>, logger: Logger): Promise<void> {
  const redis = await openRedisEndpoint(config);
  if (redis.owned) logger.info({ url: redis.description, dir: `${config.dataDir}/redis` }, 'started the embedded redis-server (append-only persistence on)');
  // Connectors load at start, not in the first request or delivery that needs one.
  const registry = createDefaultRegistry().loadAll();
  // Secrets at rest: before anything serves or delivers, every stored secret must open with the key file.
  const keys = keyFileOf(config);
  await prepareSecrets(redis.target, config, keys, logger).catch(async (err: unknown) => {
    await redis.stop();
    throw err;
  });

  let api: ApiRuntime | undefined;
  let server: ApiServer | undefined;
  let worker: WorkerRuntime | undefined;

  if (role !== 'worker') {
    const token = await resolveAdminToken(config, logger);
    api = await openApiRuntime(config, redis.target, logger, { admin: { token, registry }, keys });
    await prepareTrackers(api.store, config, registry, logger, new AuditLog(api.redis, config.redisPrefix, config.audit));
    server = await listenApi(api.app, config);
    logger.info({ url: config.publicUrl }, 'tributary API listening');
  }
  let thread: DeliveryThread | undefined;
  // With the API in this process, history waits while the API's loop is delayed (src/core/loop-delay.ts).
  const apiLoop = role === 'all' && config.delivery.historyMaxApiDelayMs > 0 ? new LoopDelayWatch().start() : undefined;
  if (role === 'all' && config.delivery.inThread) {
    thread = await startDeliveryThread(
      redis.target,
      role,
      logger,
      (err) => {
        // Without its delivery the process would accept records it never delivers: exit, for the supervisor to start it again.
        logger.fatal({ err: err.message }, 'the delivery thread stopped; exiting');
        process.exit(1);
      },
      apiLoop?.buffer,
    );
    logger.info({ connectors: thread.connectors }, 'tributary workers delivering (delivery thread)');
  } else if (role !== 'api') {
    // In one process with the API: one sampler, one set of memory warnings.
    const historyHeldBack = apiLoop && historyHeldBackBy(loopDelayReader(apiLoop.buffer), config.delivery.historyMaxApiDelayMs);
    worker = await startWorkerRuntime(config, redis.target, registry, logger, { keys, ...(historyHeldBack ? { historyHeldBack } : {}) }, api?.memory);
    logger.info({ connectors: registry.types() }, 'tributary workers delivering');
  }
  const stopWatchingKeys = watchSecretsKeys(keys, (api?.store ?? worker?.store)!, logger);

  exitOnStopSignal(logger, config.shutdownTimeoutMs, async () => {
    stopWatchingKeys();
    apiLoop?.stop();
    await server?.close();
    await api?.close();
    await thread?.close();
    await worker?.close();
    await redis.stop();
  });
}

async function main(): Promise<void> {
  const role = parseRole(process.argv[2]);
  const config = loadConfig();
  const logger = createLogger(config.logLevel).child({ role });
  if (role === 'worker' || config.apiProcesses === 1) return runOneProcess(role, config, logger);
  if (cluster.isPrimary) return runClusterPrimary(role, config, logger);
  return runClusterChild(config, logger.child({ apiProcess: cluster.worker?.id, pid: process.pid }));
}

main().catch((err: unknown) => {
  process.stderr.write(`tributary: ${(err as Error).message}\n`);
  process.exit(1);
});
