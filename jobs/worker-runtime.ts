import type { ConnectorRegistry } from '../connectors/registry';
import type { Config } from '../src/core/config';
import type { Logger } from '../src/core/logger';
import { createRedis } from '../src/core/redis/redis';
import { TrackerStore } from '../src/core/trackers/store';
import { startRouter } from './router';
import { DEFAULT_DELIVERY_OPTIONS } from './delivery-loop';
import { DeliverySupervisor, type SupervisorOptions } from './supervisor';
import { DEFAULT_SPILL_OPTIONS } from './spiller';

export interface WorkerRuntime {
  supervisor: DeliverySupervisor;
  /** Finishes or hands back the work in hand, then disconnects. */
  close: () => Promise<void>;
}

/** The delivery half of Tributary: routes the ingest queue and runs destination loops. */
export async function startWorkerRuntime(
  config: Readonly<Config>,
  redisUrl: string,
  registry: ConnectorRegistry,
  logger: Logger,
  overrides: Partial<Omit<SupervisorOptions, 'redisPrefix' | 'dataDir'>> = {},
): Promise<WorkerRuntime> {
  const connection = createRedis(redisUrl, 'worker');
  const commands = createRedis(redisUrl, 'worker');
  const store = new TrackerStore(commands, config.redisPrefix);
  const d = config.delivery;
  const router = await startRouter(connection, commands, store, logger.child({ component: 'router' }), { redisPrefix: config.redisPrefix, lockDurationMs: d.routerLockMs });
  const fromConfig: Omit<SupervisorOptions, 'redisPrefix' | 'dataDir'> = {
    discoverIntervalMs: d.discoverIntervalMs,
    leaseMs: d.leaseMs,
    delivery: {
      ...DEFAULT_DELIVERY_OPTIONS,
      backoff: { baseMs: d.backoffBaseMs, maxMs: d.backoffMaxMs },
      maxRecordAttempts: d.maxRecordAttempts,
      configRecheckMs: d.configRecheckMs,
      writeTimeoutMs: d.writeTimeoutMs,
    },
    spill: { ...DEFAULT_SPILL_OPTIONS, capRecords: d.redisCapRecords, frameRecords: d.spillFrameRecords },
  };
  const supervisor = new DeliverySupervisor(commands, store, registry, logger.child({ component: 'delivery' }), {
    ...fromConfig,
    ...overrides,
    redisPrefix: config.redisPrefix,
    dataDir: config.dataDir,
  });
  supervisor.start();
  return {
    supervisor,
    close: async () => {
      await Promise.all([router.close(), supervisor.stop()]);
      connection.disconnect();
      commands.disconnect();
    },
  };
}
