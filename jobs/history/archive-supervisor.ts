import type { RedisClient } from '../../src/core/redis/cluster';
import type { Keyspace } from '../../src/core/redis/keyspace';
import type { Logger } from '../../src/core/logger';
import type { TrackerStore } from '../../src/core/trackers/store';
import { linkedController } from '../../src/core/deadline';
import { ArchiveFiles } from './archive-files';
import { archiveDirectory, Archiver, DEFAULT_ARCHIVER_OPTIONS, type ArchiverOptions } from './archiver';
import { LeaseSupervisor, type LeasedRun } from '../delivery/discovery-loop';
import { Backfiller } from './backfill';
import { INGEST_QUEUE } from '../routing/ingest-job';
import { archiveKeys } from '../delivery/keys';
import { LeaderLock } from '../delivery/leader-lock';

export interface ArchiveSupervisorOptions {
  keyspace: Keyspace;
  /** Where archives live (ARCHIVE_DIR, default DATA_DIR/archive). */
  root: string;
  leaseMs: number;
  discoverIntervalMs: number;
  archiver?: Partial<Omit<ArchiverOptions, 'days'>>;
  /** How long past a range's end a backfill waits for late records (default DEFAULT_BACKFILL_END_MARGIN_MS). */
  backfillEndMarginMs?: number;
}

/** A tracker partition's archiver; its key is `tracker/partition`. */
interface Running extends LeasedRun {
  days: number;
}

/**
 * Holds the archive lease of every tracker partition it can (of the trackers that keep an archive)
 * and runs its archiver under it: one process writes a partition's files at a time, whichever
 * worker that is. A change of `archiveDays` restarts the archiver with the new retention; 0 stops
 * it (the files stay).
 */
export class ArchiveSupervisor extends LeaseSupervisor<Running> {
  constructor(
    private readonly redis: RedisClient,
    private readonly store: TrackerStore,
    private readonly logger: Logger,
    private readonly opts: ArchiveSupervisorOptions,
  ) {
    super(opts.discoverIntervalMs, logger, 'archive');
  }

  protected async discover(): Promise<void> {
    const wanted = new Map<string, { trackerId: string; partition: number; days: number }>();
    const { trackers, unreadable } = await this.readTrackers(this.store);
    for (const tracker of trackers) {
      if (tracker.archiveDays <= 0) continue;
      for (let partition = 0; partition < tracker.partitions; partition++) wanted.set(`${tracker.id}/${partition}`, { trackerId: tracker.id, partition, days: tracker.archiveDays });
    }
    for (const [key, run] of this.running) {
      if (unreadable(key)) continue;
      const want = wanted.get(key);
      if (!want || want.days !== run.days) run.stop.abort(new Error('archive settings changed'));
    }
    for (const [key, want] of wanted) {
      if (this.stopped || this.running.has(key)) continue;
      await this.tryRun(key, want);
    }
  }

  private async tryRun(key: string, want: { trackerId: string; partition: number; days: number }): Promise<void> {
    const keys = archiveKeys(this.opts.keyspace.prefixOf(want), want.trackerId, want.partition);
    const lock = new LeaderLock(this.redis, keys.lock, this.opts.leaseMs);
    if (!(await lock.acquire())) return;
    const stop = new AbortController();
    const run: Running = { days: want.days, stop, done: Promise.resolve() };
    this.running.set(key, run);
    const log = this.logger.child({ trackerId: want.trackerId, partition: want.partition, component: 'archive' });
    run.done = (async () => {
      const running = linkedController(stop.signal, lock.signal);
      let files: ArchiveFiles | undefined;
      try {
        files = await ArchiveFiles.open(archiveDirectory(this.opts.root, want.trackerId, want.partition), await this.redis.get(keys.archived));
        const prefix = this.opts.keyspace.prefixOf(want);
        // Caught up: nothing waits to be routed in the partition's shard, nor to be archived.
        const caughtUp = async () => (await this.redis.xlen(keys.stream)) === 0 && (await ingestIdle(this.redis, prefix));
        const backfills = { backfiller: new Backfiller(this.redis, this.opts.keyspace, files, want, log, caughtUp, this.opts.backfillEndMarginMs), tracker: () => this.store.get(want.trackerId) };
        await new Archiver(this.redis, keys, lock, files, { ...DEFAULT_ARCHIVER_OPTIONS, ...this.opts.archiver, days: want.days }, log, backfills).run(running.signal);
      } catch (err) {
        if (!running.signal.aborted) log.warn({ err: (err as Error).message }, 'archiving stopped; it starts over');
        await this.redis.hset(keys.status, 'lastError', (err as Error).message).catch(() => undefined);
      } finally {
        running.abort(new Error('run ended'));
        await files?.close().catch(() => undefined);
        await lock.release();
        this.running.delete(key);
      }
    })();
  }
}

/** Whether a shard's ingest queue holds no job waiting or being routed. */
async function ingestIdle(redis: RedisClient, prefix: string): Promise<boolean> {
  const key = (name: string) => `${prefix}:${INGEST_QUEUE}:${name}`;
  const [wait, active, paused] = await Promise.all([redis.llen(key('wait')), redis.llen(key('active')), redis.llen(key('paused'))]);
  return wait + active + paused === 0;
}
