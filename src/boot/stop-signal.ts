import type { Logger } from '../core/logger';

/**
 * On the first SIGTERM or SIGINT: runs `stop`, then exits 0. Exits 1 when `stop` fails or takes
 * longer than `timeoutMs` (SHUTDOWN_TIMEOUT_MS). Later signals change nothing: a Ctrl-C reaches
 * every process of the terminal's group, a cluster child included, as well as its primary's SIGTERM.
 */
export function exitOnStopSignal(logger: Logger, timeoutMs: number, stop: () => Promise<void>): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: no new requests, flushing queued writes, handing back batches');
    const timer = setTimeout(() => {
      logger.error('shutdown timed out');
      process.exit(1);
    }, timeoutMs).unref();
    stop().then(
      () => {
        clearTimeout(timer);
        logger.info('stopped');
        process.exit(0);
      },
      (err: unknown) => {
        logger.error({ err: (err as Error).message }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
