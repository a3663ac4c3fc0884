import type { ConnectorRegistry } from '../connectors/registry';
import type { Config } from '../src/core/config';
import type { Logger } from '../src/core/logger';
import { createRedisClient, targetOf, type RedisLocation } from '../src/core/redis/cluster';
import { checkKeyspaceLayout } from '../src/core/redis/keyspace-layout';
import { MemoryBudget } from '../src/core/redis/memory-budget';
import { TrackerStore } from '../src/core/trackers/store';
import { keyFileOf, type KeyFileKeyring } from '../src/core/secrets/key-file';
import { watchTrackerChanges } from '../src/core/trackers/changes';
import { startRouter } from './routing/router';
import { DEFAULT_DELIVERY_OPTIONS } from './delivery/delivery-loop';
import { DeliverySupervisor, type SupervisorOptions } from './delivery/supervisor';
import { ArchiveSupervisor, type ArchiveSupervisorOptions } from './history/archive-supervisor';
import { DEFAULT_SPILL_OPTIONS } from './spill/spiller';

export interface WorkerRuntime {
  supervisor: DeliverySupervisor;
  /** The archivers of the tracker partitions this process holds (jobs/history/archive-supervisor.ts). */
  archives: ArchiveSupervisor;
  /** Redis memory against its budget, as this process samples it (or the API's, when they share a process). */
  memory: MemoryBudget;
  /** The trackers as this process reads them, their secrets opened with its keys. */
  store: TrackerStore;
  /** Finishes or hands back the work in hand, then disconnects. */
  close: () => Promise<void>;
}

/** The delivery half of Tributary: routes the ingest queue and runs destination loops. */
export async function startWorkerRuntime(
  config: Readonly<Config>,
  redisLocation: RedisLocation,
  registry: ConnectorRegistry,
  logger: Logger,
  overrides: Partial<Omit<SupervisorOptions, 'keyspace' | 'dataDir' | 'engine'>> & {
    archive?: Pick<ArchiveSupervisorOptions, 'archiver' | 'backfillEndMarginMs'>;
    /** The keys of the secrets in Redis (src/boot/secrets-keys.ts). Default: the key file the configuration names. */
    keys?: KeyFileKeyring;
    /** History waits while this says so (jobs/delivery/delivery-loop.ts `historyHeldBack`): the API's loop is delayed. */
    historyHeldBack?: () => boolean;
  } = {},
  sharedMemory?: MemoryBudget,
): Promise<WorkerRuntime> {
  const { archive, keys = keyFileOf(config), historyHeldBack, ...supervisorOverrides } = overrides;
  const connection = createRedisClient(targetOf(redisLocation), 'worker');
  const commands = createRedisClient(targetOf(redisLocation), 'worker');
  // A worker-only process samples for itself, so its log warns at the watermarks too.
  const memory = sharedMemory ?? new MemoryBudget(commands, logger.child({ component: 'memory' }), config.memory).start();
  await checkKeyspaceLayout(commands, config.keyspace);
  const store = new TrackerStore(commands, config.redisPrefix, keys);
  const d = config.delivery;
  const router = await startRouter(connection, commands, store, logger.child({ component: 'router' }), { keyspace: config.keyspace, lockDurationMs: d.routerLockMs });
  const fromConfig: Omit<SupervisorOptions, 'keyspace' | 'dataDir' | 'engine'> = {
    discoverIntervalMs: d.discoverIntervalMs,
    leaseMs: d.leaseMs,
    sampleMs: d.sampleMs,
    delivery: {
      ...DEFAULT_DELIVERY_OPTIONS,
      backoff: { baseMs: d.backoffBaseMs, maxMs: d.backoffMaxMs },
      maxRecordAttempts: d.maxRecordAttempts,
      configRecheckMs: d.configRecheckMs,
      writeTimeoutMs: d.writeTimeoutMs,
    },
    spill: {
      ...DEFAULT_SPILL_OPTIONS,
      capRecords: d.redisCapRecords,
      frameRecords: d.spillFrameRecords,
      underPressure: () => {
        const { usedBytes, limitBytes } = memory.snapshot();
        return usedBytes !== null && limitBytes !== null && usedBytes >= (limitBytes * config.memory.spillPercent) / 100;
      },
    },
  };
  const supervisor = new DeliverySupervisor(commands, store, registry, logger.child({ component: 'delivery' }), {
    ...fromConfig,
    ...supervisorOverrides,
    delivery: { ...(supervisorOverrides.delivery ?? fromConfig.delivery), ...(historyHeldBack ? { historyHeldBack } : {}) },
    keyspace: config.keyspace,
    dataDir: config.dataDir,
    engine: config.warehouse,
  });
  supervisor.start();
  const archives = new ArchiveSupervisor(commands, store, logger.child({ component: 'archive' }), { keyspace: config.keyspace, root: config.archiveDir, leaseMs: d.leaseMs, discoverIntervalMs: d.discoverIntervalMs, ...archive });
  archives.start();
  // A tracker saved by any process: route its next records with its new destinations and rules, and start or stop deliveries now.
  const changesSubscriber = createRedisClient(targetOf(redisLocation), 'worker');
  watchTrackerChanges(changesSubscriber, config.redisPrefix, (trackerId) => {
    router.forget(trackerId);
    supervisor.wake();
    archives.wake();
  }).catch((err: unknown) => logger.warn({ err: (err as Error).message }, 'tracker changes: not watched; the router and the workers see changes within a second or two'));
  return {
    supervisor,
    archives,
    memory,
    store,
    close: async () => {
      if (!sharedMemory) memory.stop();
      changesSubscriber.disconnect();
      await Promise.all([router.close(), supervisor.stop(), archives.stop()]);
      connection.disconnect();
      commands.disconnect();
    },
  };
}
