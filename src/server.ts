import { createServer } from 'node:http';
import { loadConfig } from './config';
import { createLogger } from './logger';
import { createApiRuntime } from './runtime';
import { loadConfigFile } from './trackers/config-file';

const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const redisUrl = config.redisUrl ?? DEFAULT_REDIS_URL;
  const runtime = createApiRuntime(config, redisUrl, logger);

  if (config.configFile) {
    const trackers = await loadConfigFile(config.configFile);
    for (const tracker of trackers) await runtime.store.save(tracker);
    logger.info({ count: trackers.length, file: config.configFile }, 'trackers loaded from config file');
  }

  const server = createServer(runtime.app.callback());
  server.keepAliveTimeout = 65_000;
  server.listen(config.port, config.host, () => logger.info({ url: config.publicUrl, redis: redisUrl.replace(/\/\/[^@]*@/, '//***@') }, 'tributary listening'));

  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: no new connections, flushing queued writes');
    const timer = setTimeout(() => {
      logger.error('shutdown timed out');
      process.exit(1);
    }, config.shutdownTimeoutMs).unref();
    server.close();
    server.closeIdleConnections();
    await runtime.close();
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
