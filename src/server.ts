import { createServer, type Server } from 'node:http';
import { createDefaultRegistry } from '../connectors';
import { startWorkerRuntime, type WorkerRuntime } from '../jobs/worker-runtime';
import { ensureAdminToken } from './admin/admin-token';
import { loadConfig } from './config';
import { ensureDemoTracker } from './demo-tracker';
import { ensureRedis } from './embedded-redis';
import { createLogger } from './logger';
import { createApiRuntime, type ApiRuntime } from './runtime';
import { loadConfigFile } from './trackers/config-file';
import { DestinationService } from './trackers/destinations';
import { TrackerService } from './trackers/service';

/** `all` (npm start): API and workers in one process. `api` and `worker` run one half each, for scale-out. */
type Role = 'all' | 'api' | 'worker';

function parseRole(arg: string | undefined): Role {
  if (arg === undefined || arg === 'all' || arg === 'api' || arg === 'worker') return arg ?? 'all';
  throw new Error(`unknown role "${arg}": use all, api or worker`);
}

async function main(): Promise<void> {
  const role = parseRole(process.argv[2]);
  const config = loadConfig();
  const logger = createLogger(config.logLevel).child({ role });
  const redis = await ensureRedis(config.redisUrl, config.dataDir);
  if (redis.owned) logger.info({ url: redis.url, dir: `${config.dataDir}/redis` }, 'started the embedded redis-server (append-only persistence on)');
  const registry = createDefaultRegistry();

  let api: ApiRuntime | undefined;
  let server: Server | undefined;
  let worker: WorkerRuntime | undefined;

  if (role !== 'worker') {
    const admin = await ensureAdminToken(config.dataDir, config.adminToken);
    if (admin.source === 'generated') {
      logger.info({ file: admin.file }, 'first start: generated the admin token');
      // Printed this once only; afterwards it is read from the file (mode 0600), never logged.
      process.stdout.write(`\nAdmin API token (kept in ${admin.file}; shown only now):\n  ${admin.token}\n`);
    }
    api = createApiRuntime(config, redis.url, logger, undefined, { token: admin.token, registry });
    await api.queue.waitUntilReady();
    if (config.configFile) {
      const trackers = await loadConfigFile(config.configFile);
      for (const tracker of trackers) await api.store.save(tracker);
      logger.info({ count: trackers.length, file: config.configFile }, 'trackers loaded from config file');
    }
    const destinations = new DestinationService(api.store, registry, config.dataDir, logger);
    await ensureDemoTracker(new TrackerService(api.store), destinations, config.publicUrl, logger, (text) => process.stdout.write(text));
    server = createServer(api.app.callback());
    server.keepAliveTimeout = 65_000;
    await new Promise<void>((resolve) => server!.listen(config.port, config.host, resolve));
    logger.info({ url: config.publicUrl }, 'tributary API listening');
  }
  if (role !== 'api') {
    worker = await startWorkerRuntime(config, redis.url, registry, logger);
    logger.info({ connectors: registry.types() }, 'tributary workers delivering');
  }

  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: no new requests, flushing queued writes, handing back batches');
    const timer = setTimeout(() => {
      logger.error('shutdown timed out');
      process.exit(1);
    }, config.shutdownTimeoutMs).unref();
    if (server) {
      // Requests in progress finish (their records reach Redis); idle keep-alive sockets are closed.
      const closed = new Promise<void>((resolve) => server!.close(() => resolve()));
      server.closeIdleConnections();
      const grace = new Promise<void>((resolve) => setTimeout(resolve, config.shutdownTimeoutMs / 2).unref());
      await Promise.race([closed, grace]);
      server.closeAllConnections();
    }
    await api?.close();
    await worker?.close();
    await redis.stop();
    clearTimeout(timer);
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`tributary: ${(err as Error).message}\n`);
  process.exit(1);
});
