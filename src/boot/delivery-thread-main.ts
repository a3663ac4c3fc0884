import { parentPort, workerData } from 'node:worker_threads';
import { createDefaultRegistry } from '../../connectors';
import { startWorkerRuntime } from '../../jobs/worker-runtime';
import { loadConfig } from '../core/config';
import { createLogger } from '../core/logger';
import { historyHeldBackBy, loopDelayReader } from '../core/loop-delay';
import { keyFileOf } from '../core/secrets/key-file';
import type { DeliveryThreadData, FromThread, ToThread } from './delivery-thread';
import { watchSecretsKeys } from './secrets-keys';

/** The delivery thread of `npm start` (src/boot/delivery-thread.ts): a worker runtime with its own loop and heap. */
async function run(data: DeliveryThreadData): Promise<void> {
  const port = parentPort!;
  const send = (m: FromThread) => port.postMessage(m);
  const config = loadConfig();
  const logger = createLogger(config.logLevel).child({ role: data.role, thread: 'delivery' });
  try {
    const registry = createDefaultRegistry().loadAll();
    // Its own keyring, read from the same key file and watched as the API's is.
    const keys = keyFileOf(config);
    const historyHeldBack = data.apiLoopDelay && historyHeldBackBy(loopDelayReader(data.apiLoopDelay), config.delivery.historyMaxApiDelayMs);
    const runtime = await startWorkerRuntime(config, data.redis, registry, logger, { keys, ...(historyHeldBack ? { historyHeldBack } : {}) });
    const stopWatchingKeys = watchSecretsKeys(keys, runtime.store, logger);
    port.on('message', (m: ToThread) => {
      if (m.type !== 'stop') return;
      stopWatchingKeys();
      runtime.close().then(
        () => send({ type: 'stopped' }),
        (err: unknown) => {
          logger.error({ err: (err as Error).message }, 'delivery thread: stop failed');
          send({ type: 'stopped' });
        },
      );
    });
    send({ type: 'ready', connectors: registry.types() });
  } catch (err) {
    send({ type: 'failed', message: (err as Error).message });
  }
}

void run(workerData as DeliveryThreadData);
