import { rm } from 'node:fs/promises';
import { duplicateClient, type RedisClient } from '../../src/core/redis/cluster';
import type { ConnectorRegistry } from '../../connectors/registry';
import type { DestinationWriter, EngineLimits } from '../../connectors/types';
import { ConfigurationError } from '../../connectors/errors';
import type { Logger } from '../../src/core/logger';
import type { TrackerStore } from '../../src/core/trackers/store';
import type { Destination } from '../../src/core/trackers/types';
import { linkedController, withDeadline } from '../../src/core/deadline';
import { sleep } from '../../src/core/sleep';
import { openSpool, Spiller, SpoolMissingError, type SpillOptions } from '../spill/spiller';
import { spoolDirectory, type Spool } from '../spill/spool';
import { DeliveryLoop, type DeliveryLoopOptions } from './delivery-loop';
import { StreamCompactor } from '../spill/compactor';
import { StreamReadTurns } from './read-turns';
import { DestinationStatusStore } from './destination-status';
import { DestinationSeries } from './destination-series';
import { partitionDeliveryKeys, type DeliveryKeys, type DestinationRef } from './keys';
import type { Keyspace } from '../../src/core/redis/keyspace';
import { LeaderLock } from './leader-lock';
import { LeaseSupervisor, type LeasedRun } from './discovery-loop';

export interface SupervisorOptions {
  /** Where each tracker partition's delivery keys live. */
  keyspace: Keyspace;
  dataDir: string;
  /** What the local warehouse's DuckDB may take of the host (WAREHOUSE_MEMORY_MB, WAREHOUSE_TEMP_DIR); absent, the connector's defaults. */
  engine?: EngineLimits;
  /** How often trackers are re-read to start, stop or restart destinations. Default 2000 ms. */
  discoverIntervalMs: number;
  /** Lease of a destination; another worker takes over this long after a holder dies. Default 15 s. */
  leaseMs: number;
  delivery: Omit<DeliveryLoopOptions, 'batch'>;
  /** Redis cap per destination and disk spool (jobs/spill/spiller.ts). */
  spill: SpillOptions;
  /** How often the backlog and lag of a held destination are sampled for its pictures over time (DELIVERY_SAMPLE_MS); the last sample of a minute is kept. Default 60 s. */
  sampleMs?: number;
}

/** A destination partition the trackers ask for. */
interface Wanted {
  ref: DestinationRef;
  destination: Destination;
  /** The tracker's partition count. */
  partitions: number;
}

/**
 * What a run was started with: a change restarts it with the new settings. Rules are not part of
 * it: they run at routing (jobs/routing/destination-blocks.ts), and a delivery loop has nothing to redo
 * when they change.
 */
const fingerprint = (want: Wanted) => JSON.stringify([{ ...want.destination, rules: undefined }, want.partitions]);

/** A destination partition's run; its key is `tracker/destination`, `tracker/destination/partition` past partition 0. */
interface Running extends LeasedRun {
  fingerprint: string;
  /** The destination is gone: its disk spool goes with it once the run has stopped. */
  removed?: boolean;
}

/** Longest wait for a writer to close before its lease is released anyway. */
const CLOSE_TIMEOUT_MS = 10_000;

const refKey = (ref: DestinationRef) => `${ref.trackerId}/${ref.destinationId}${ref.partition ? `/${ref.partition}` : ''}`;

/**
 * Holds the lease of every destination it can, and keeps that set in step with the trackers: a new
 * destination starts within one discovery interval, a removed one stops, one whose settings changed
 * (enabled or disabled included) restarts with the new settings. Under each lease a spiller keeps
 * the destination's Redis stream under its cap (jobs/spill/spiller.ts) and, when enabled, a delivery loop
 * delivers it, disk spool first; a compactor keeps the backlog dense while nothing reads it (jobs/spill/compactor.ts).
 */
export class DeliverySupervisor extends LeaseSupervisor<Running> {
  constructor(
    private readonly redis: RedisClient,
    private readonly store: TrackerStore,
    private readonly registry: ConnectorRegistry,
    private readonly logger: Logger,
    private readonly opts: SupervisorOptions,
  ) {
    super(opts.discoverIntervalMs, logger, 'destination');
  }

  protected async discover(): Promise<void> {
    const wanted = new Map<string, Wanted>();
    const { trackers, unreadable } = await this.readTrackers(this.store);
    for (const tracker of trackers) {
      for (const destination of tracker.destinations) {
        // Each partition of a destination is delivered on its own lease, in parallel with the others.
        for (let partition = 0; partition < tracker.partitions; partition++) {
          const ref = { trackerId: tracker.id, destinationId: destination.id, partition };
          wanted.set(refKey(ref), { ref, destination, partitions: tracker.partitions });
        }
      }
    }
    for (const [key, run] of this.running) {
      if (unreadable(key)) continue;
      const want = wanted.get(key);
      if (!want) run.removed = true;
      if (!want || fingerprint(want) !== run.fingerprint) run.stop.abort(new Error('destination changed'));
    }
    for (const [key, want] of wanted) {
      if (this.stopped || this.running.has(key)) continue;
      await this.tryLead(key, want);
    }
  }

  private async tryLead(key: string, want: Wanted): Promise<void> {
    const { ref, destination } = want;
    const keys = partitionDeliveryKeys(this.opts.keyspace, ref);
    const lock = new LeaderLock(this.redis, keys.lock, this.opts.leaseMs);
    if (!(await lock.acquire())) return;
    const status = new DestinationStatusStore(this.redis, keys);
    const connector = this.registry.get(destination.type);
    const settings = connector?.settingsSchema.safeParse(destination.settings);
    if (!connector || !settings?.success) {
      const reason = !connector ? `no connector for destination type "${destination.type}"` : `invalid settings: ${settings!.error!.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`;
      await status.recordError(new ConfigurationError(reason));
      await lock.release();
      return;
    }
    // A destination that takes one writer at a time cannot take a partitioned tracker's parallel
    // ones: its records wait (and spill) as if it were disabled, with the reason in its status.
    const refusal = connector.singleWriter && want.partitions > 1 ? new ConfigurationError(`a ${destination.type} destination takes one writer at a time, and tracker ${ref.trackerId} has ${want.partitions} partitions delivered in parallel; set the tracker's partitions to 1 or use another destination type (records wait until then)`) : undefined;
    if (refusal) await status.recordError(refusal).catch(() => undefined);
    const stop = new AbortController();
    const run: Running = { fingerprint: fingerprint(want), stop, done: Promise.resolve() };
    this.running.set(key, run);
    const log = this.logger.child({ trackerId: ref.trackerId, destinationId: ref.destinationId, type: destination.type });
    run.done = (async () => {
      let writer: DestinationWriter | undefined;
      let spool: Spool | undefined;
      const blocking = duplicateClient(this.redis);
      // Ends the run when the supervisor stops it, the lease is lost, or spilling must start over.
      const running = linkedController(stop.signal, lock.signal);
      try {
        spool = await this.openSpoolOrWait(ref, keys, status, running.signal, log);
        if (!spool) return;
        // A first start, an enable or a disable is a moment of the destination's pictures; a restart is not.
        const series = new DestinationSeries(this.redis, keys);
        await series.mark(destination.enabled ? 'delivering' : 'disabled', destination.enabled ? { onlyFrom: ['', 'disabled'] } : {}).catch(() => false);
        // Not awaited when the run ends: it stops at the abort, and a sample still in flight is harmless (it writes its minute).
        void series.runSampler(running.signal, () => status.read(), this.opts.sampleMs);
        const delivering = destination.enabled && !refusal;
        // The backlog is rewritten denser where nothing reads it: without a delivery loop, or past what a stalled one has read.
        const turns = delivering ? new StreamReadTurns() : undefined;
        const compactor = new StreamCompactor(this.redis, keys, lock, log, turns);
        const spilling = new Spiller(this.redis, keys, lock, spool, this.opts.spill, log, compactor).run(running.signal).catch((err: unknown) => {
          log.warn({ err: (err as Error).message }, 'spilling stopped; the destination starts over');
          running.abort(err);
        });
        if (delivering) {
          writer = await connector.open({ ...ref, settings: settings.data, dataDir: this.opts.dataDir, ...(this.opts.engine ? { engine: this.opts.engine } : {}), logger: log, now: () => new Date() });
          log.info('delivering');
          await new DeliveryLoop(this.redis, blocking, keys, writer, lock, { ...this.opts.delivery, batch: connector.batchFor?.(settings.data) ?? connector.batch, ...(connector.historyBatchRecords ? { historyBatchRecords: connector.historyBatchRecords } : {}) }, log, spool, turns).run(running.signal);
          running.abort(new Error('delivery loop ended'));
        }
        await spilling;
      } catch (err) {
        log.warn({ err: (err as Error).message }, 'destination could not be opened');
        await status.recordError(err instanceof ConfigurationError ? err : new ConfigurationError((err as Error).message)).catch(() => undefined);
      } finally {
        running.abort(new Error('run ended'));
        // A writer wedged by a hung call may never finish closing: give it a bound.
        if (writer) await withDeadline({ timeoutMs: CLOSE_TIMEOUT_MS, signal: new AbortController().signal, timeoutError: () => new Error('close timed out') }, () => writer!.close()).catch((err: unknown) => log.warn({ err: (err as Error).message }, 'destination writer did not close cleanly'));
        await spool?.close().catch(() => undefined);
        if (run.removed) await rm(spoolDirectory(this.opts.dataDir, ref.trackerId, ref.destinationId, ref.partition), { recursive: true, force: true }).catch(() => undefined);
        blocking.disconnect();
        await lock.release();
        this.running.delete(key);
      }
    })();
  }

  /**
   * The destination's spool, or undefined when Redis says records were spilled to a spool this host
   * does not have: that is reported as a configuration error, and the lease is kept a while before
   * it is let go, so that the host that has the spool can take it.
   */
  private async openSpoolOrWait(ref: DestinationRef, keys: DeliveryKeys, status: DestinationStatusStore, signal: AbortSignal, log: Logger): Promise<Spool | undefined> {
    try {
      return await openSpool(this.redis, keys, spoolDirectory(this.opts.dataDir, ref.trackerId, ref.destinationId, ref.partition));
    } catch (err) {
      if (!(err instanceof SpoolMissingError)) throw err;
      log.error({ err: err.message }, 'disk spool missing on this host');
      await status.recordError(new ConfigurationError(err.message)).catch(() => undefined);
      await sleep(this.opts.delivery.configRecheckMs, signal).catch(() => undefined);
      return undefined;
    }
  }
}
