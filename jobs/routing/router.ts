import { Queue, WaitingError, Worker, type Job } from 'bullmq';
import type { RedisClient } from '../../src/core/redis/cluster';
import { throttledErrorLog, type Logger } from '../../src/core/logger';
import { duplicatesKey, newIngestJob, INGEST_QUEUE, queuedExact, queuedLines, queuedRecordCount, queuedRecordsKey, type QueuedJobData } from './ingest-job';
import { discardJob, routeAlone } from './route-alone';
import { RulesCache } from '../../src/core/rules/compile';
import { MAX_RUN_BYTES, MAX_RUN_JOBS, MAX_RUN_RECORDS, planRun, readRun, routeRun, stepRecords, type Routing, type RunJob, type RunSource } from './route-run';
import { isUnreadableTracker, type TrackerStore } from '../../src/core/trackers/store';
import type { Tracker } from '../../src/core/trackers/types';
import { ANY_TRACKER } from '../../src/core/trackers/changes';
import { sleep } from '../../src/core/sleep';
import { isOutOfMemoryError } from '../../src/core/redis/out-of-memory';
import { backoffDelay, DEFAULT_BACKOFF } from '../delivery/backoff';
import { INGEST_JOB_NAME } from './ingest-job';
import { backlogIndexKey, parseBacklogMember, routerCursorKey } from '../delivery/keys';
import type { Keyspace } from '../../src/core/redis/keyspace';

/**
 * How often routing is tried again while Redis refuses it for its memory limit: one refused
 * script a second is nothing to Redis, and routing resumes within a second of memory being freed.
 */
const OUT_OF_MEMORY_RETRY_MS = 1000;

/**
 * A job of fewer records than LINGER_BELOW_RECORDS waits LINGER_MS before its run is read, so that
 * the jobs that come meanwhile join it. Without it, single events at a steady rate were a routing
 * step each (read and route scripts, a stream entry and its deflate, a delivery read, per record),
 * the worker's largest cost a record (bench/RESULTS.md); records reach their destination streams
 * that much later, which their batching (a quarter of a second and more) does not notice.
 */
const LINGER_MS = 5;
const LINGER_BELOW_RECORDS = 32;

/** Backlog entries moved per Redis call: about a millisecond of Redis time per destination. */
const BACKLOG_MOVE_CHUNK = 500;

export interface RouterOptions {
  /** One routing step per shard, over the shard's ingest queue and keys. */
  keyspace: Keyspace;
  /** How long a tracker's destination list is cached. Default 1000 ms. */
  trackerCacheMs?: number;
  /** A job whose worker stopped renewing its lock is taken back after this long. Default 10 s. */
  lockDurationMs?: number;
  /** Backlog entries moved to the destinations per Redis call. Default 500. */
  backlogChunk?: number;
  /** How often to look for backlogs whose tracker now has a destination. Default 2000 ms. */
  backlogCheckMs?: number;
  /**
   * Called once per job when its records are routed: a job's records (duplicates left out) and
   * its tracker's destination count. A job routed in a run is reported with the run; a job found
   * routed already is not reported again.
   */
  onRouted?: (records: number, destinations: number) => void;
}

export interface Router {
  /** Waits up to `graceMs` for the jobs in hand, then lets go of them (they stall and are taken back). */
  close: (graceMs?: number) => Promise<void>;
  /** Drops a tracker from the cache (`*`: every tracker), so that the next job reads its destinations and rules anew. */
  forget: (trackerId: string) => void;
}

/**
 * Fans the ingest queues out to per-destination streams: one routing step per shard
 * (src/core/redis/keyspace.ts), so that shards route in parallel on any number of workers.
 */
export async function startRouter(connection: RedisClient, commands: RedisClient, store: TrackerStore, logger: Logger, opts: RouterOptions): Promise<Router> {
  const cache = new Map<string, { tracker: Tracker | undefined; until: number }>();
  /**
   * Each tracker as it was last read. A tracker that can no longer be read (a hand edit, a key the
   * key file lost) is routed as it last could be, as its destinations keep delivering
   * (jobs/delivery/discovery-loop.ts): its records were accepted under those settings. One this
   * process never read throws (isUnreadableTracker); see `routingOf`.
   */
  const lastRead = new Map<string, Tracker>();
  const unreadableLogged = new Set<string>();
  const logUnreadable = (id: string, err: Error, what: string): void => {
    if (unreadableLogged.has(id)) return;
    unreadableLogged.add(id);
    logger.error({ trackerId: id, err: err.message }, `tracker ${id} cannot be read; ${what}`);
  };
  const trackerFor = async (id: string): Promise<Tracker | undefined> => {
    const hit = cache.get(id);
    if (hit && hit.until > Date.now()) return hit.tracker;
    let tracker: Tracker | undefined;
    try {
      tracker = await store.get(id);
    } catch (err) {
      const last = lastRead.get(id);
      if (!isUnreadableTracker(err) || !last) throw err;
      logUnreadable(id, err, 'its records are routed with its settings as last read');
      tracker = last;
    }
    if (tracker && tracker !== lastRead.get(id)) {
      lastRead.set(id, tracker);
      unreadableLogged.delete(id);
    } else if (!tracker) lastRead.delete(id);
    cache.set(id, { tracker, until: Date.now() + (opts.trackerCacheMs ?? 1000) });
    return tracker;
  };
  const routingOf = async (id: string): Promise<Routing> => {
    try {
      const tracker = await trackerFor(id);
      if (!tracker && (await store.removedAt(id)) !== undefined) return { destinations: [], archive: false, removed: true };
      return { destinations: tracker?.destinations ?? [], archive: (tracker?.archiveDays ?? 0) > 0 };
    } catch (err) {
      if (!isUnreadableTracker(err)) throw err;
      // A tracker this process never read: its records wait in its backlog, as those of a tracker
      // without a destination do, and move to its destinations in the order accepted once it can be
      // read (nudgeBacklogs), while the shard's other trackers go on. They are archived now, since
      // whether it keeps an archive cannot be known and a record left out could not be backfilled
      // later; a tracker without one leaves them in its capped archive stream.
      logUnreadable(id, err, 'its records wait in its backlog until it can be read');
      return { destinations: [], archive: true, unreadable: true };
    }
  };
  const shards = await Promise.all(Array.from({ length: opts.keyspace.shards }, (_, s) => startShardRouter(connection, commands, routingOf, logger, opts, opts.keyspace.shardPrefix(s))));
  return {
    close: async (graceMs) => {
      await Promise.all(shards.map((r) => r.close(graceMs)));
    },
    forget: (trackerId) => {
      if (trackerId === ANY_TRACKER) cache.clear();
      else cache.delete(trackerId);
    },
  };
}

/**
 * Routes one shard's ingest queue. One job at a time across every worker (BullMQ global
 * concurrency 1), and a failure is retried in place rather than handed back to BullMQ, because
 * BullMQ would retry it after later jobs and break the accepted order. A stalled job goes back to
 * the head of the queue (BullMQ pushes it on the consuming end). Every tracker partition belongs to
 * one shard, so its records are routed in the order they were accepted.
 *
 * The job in hand takes the jobs already waiting right behind it along (jobs/routing/route-run.ts): under
 * load a job routes a run of them, each tracker partition's records of the run in one stream
 * entry per destination, and BullMQ then hands those jobs over only to be completed. A job of
 * fewer than LINGER_BELOW_RECORDS waits LINGER_MS first, so that steady single events make runs
 * too; a larger job does not wait.
 */
async function startShardRouter(connection: RedisClient, commands: RedisClient, routingOf: (trackerId: string) => Promise<Routing>, logger: Logger, opts: RouterOptions, prefix: string): Promise<Pick<Router, 'close'>> {
  const queue = new Queue<QueuedJobData>(INGEST_QUEUE, { connection, prefix });
  queue.on('error', throttledErrorLog(logger, 'router queue connection'));
  await queue.setGlobalConcurrency(1);

  const stopping = new AbortController();
  /** Indices of the job's records whose client key was accepted before (written with the job, see src/ingest/dedup.ts). */
  const duplicatesOf = async (data: QueuedJobData): Promise<Set<number> | undefined> => {
    if (!data.dedup) return undefined;
    const list = await commands.get(duplicatesKey(prefix, data.dedup));
    return list ? new Set(list.split(',').map(Number)) : undefined;
  };

  /** Since when Redis has refused routing for its memory limit; logged once on entering and once on leaving. */
  let outOfMemorySince: number | undefined;
  /**
   * The jobs this process routed as part of a run started by an earlier job: BullMQ still hands
   * them over one by one, and they complete at once, without a Redis call. (Were the process to
   * restart, the shard's cursor in Redis would tell the same, at the cost of a script call.)
   */
  let merged = { from: 1, through: 0 };
  const cursorKey = routerCursorKey(prefix);
  const rules = new RulesCache();
  const source: RunSource = {
    commands,
    prefix,
    waitKey: queue.keys.wait!,
    markerKey: queue.keys.marker!,
    jobPrefix: queue.toKey(''),
    routingOf,
  };

  /**
   * One job alone (jobs/routing/route-alone.ts): a job whose tracker has no destination (its records go to
   * the backlog), one whose tracker partition's backlog must move first, one that nothing waits behind.
   */
  const routeJobAlone = async (job: Job<QueuedJobData>, first: RunJob): Promise<void> => {
    const { trackerId } = job.data;
    const { destinations, archive, lines } = first;
    if (first.removed) {
      if (await discardJob({ commands, cursorKey }, { id: job.id!, recordsKey: queuedRecordsKey(source.jobPrefix + job.id!) })) logger.info({ trackerId, records: lines.count }, 'tracker removed: its queued records were discarded');
      if (job.data.dedup) await commands.del(duplicatesKey(prefix, job.data.dedup)).catch(() => undefined);
      return;
    }
    if (destinations.length === 0 && !first.unreadable) logger.warn({ trackerId, records: lines.count }, 'no destination: records kept in the tracker backlog until one is added');
    const routed = await routeAlone(
      { commands, prefix, cursorKey, rules, backlogChunk: opts.backlogChunk ?? BACKLOG_MOVE_CHUNK },
      { id: job.id!, trackerId, partition: job.data.partition ?? 0, destinations, archive, records: stepRecords([first]), recordsKey: queuedRecordsKey(source.jobPrefix + job.id!) },
    );
    // Routed: the list is no longer needed (the route cursor keeps the job from being routed again).
    if (job.data.dedup) await commands.del(duplicatesKey(prefix, job.data.dedup)).catch(() => undefined);
    if (routed) opts.onRouted?.(lines.count, destinations.length);
  };

  /**
   * The job in hand and those waiting right behind it, as one run when there are some (jobs/routing/route-run.ts),
   * else alone. A run that meets a backlog is cut short before it, down to the job alone.
   */
  const routeJob = async (job: Job<QueuedJobData>, id: number): Promise<void> => {
    const { data } = job;
    const routing = await source.routingOf(data.trackerId);
    // BullMQ numbers the jobs of a queue without custom ids from one counter; any other id is routed alone.
    const recordCount = queuedRecordCount(data);
    const runs = routing.destinations.length > 0 && Number.isSafeInteger(id) && recordCount < MAX_RUN_RECORDS;
    if (runs && recordCount < LINGER_BELOW_RECORDS) await sleep(LINGER_MS, stopping.signal).catch(() => undefined);
    const read = await readRun(source, id, runs ? MAX_RUN_JOBS - 1 : 0, MAX_RUN_BYTES);
    // Routing deletes a job's records: a job without them whose id the cursor has passed was routed
    // by a run (or by a worker that stopped before BullMQ completed it).
    if (data.v !== undefined && data.n > 0 && read.inHand === null && Number((await commands.get(cursorKey)) ?? 0) >= id) return;
    const skip = await duplicatesOf(data);
    const first: RunJob = { id, data, ...routing, lines: queuedLines(String(id), data, read.inHand, skip), exact: queuedExact(data), skip };
    let run = runs ? await planRun(source, first, read.behind) : [first];
    while (run.length > 1) {
      const outcome = await routeRun(commands, prefix, source.jobPrefix, cursorKey, run, rules);
      if (outcome.kind === 'backlog') {
        run = run.slice(0, outcome.index);
        continue;
      }
      merged = { from: id + 1, through: outcome.kind === 'routed' ? run.at(-1)!.id : outcome.cursor };
      if (outcome.kind === 'routed') for (const j of run) opts.onRouted?.(j.lines.count, j.destinations.length);
      return;
    }
    await routeJobAlone(job, first);
  };

  /**
   * Stopping while a job cannot be routed (Redis refusing, a job this relay cannot read): the job
   * goes back to the consuming end of the wait list, first in line for the next worker, and
   * BullMQ is told it is waiting (WaitingError), so it neither completes nor fails it and the
   * worker's close does not wait on it. Were Redis unreachable, the job stays active and stalls
   * back once its lock expires.
   */
  const handBack = async (job: Job<QueuedJobData>, token: string | undefined): Promise<never> => {
    if (token !== undefined) await job.moveToWait(token).catch(() => undefined);
    throw new WaitingError();
  };

  const route = async (job: Job<QueuedJobData>, token?: string): Promise<void> => {
    const id = Number(job.id);
    if (id >= merged.from && id <= merged.through) return;
    for (let attempt = 0; ; attempt++) {
      try {
        await routeJob(job, id);
        if (outOfMemorySince !== undefined) {
          logger.info({ waitedMs: Date.now() - outOfMemorySince }, 'Redis memory freed: routing resumed');
          outOfMemorySince = undefined;
        }
        return;
      } catch (err) {
        if (stopping.signal.aborted) return handBack(job, token);
        if (isOutOfMemoryError(err)) {
          // Records cannot move until memory is freed (delivery, dlq discard, destinations remove):
          // wait quietly rather than retry and log at full speed. BullMQ cannot renew this job's
          // lock meanwhile (its SET is refused too); the job is routed once, whoever finishes it.
          if (outOfMemorySince === undefined) {
            outOfMemorySince = Date.now();
            logger.warn({ jobId: job.id }, 'Redis is at its memory limit: routing waits until memory is freed');
          }
          await sleep(OUT_OF_MEMORY_RETRY_MS, stopping.signal).catch(() => undefined);
          continue;
        }
        // Never fail the job: BullMQ would fail it (or retry it behind later ones), out of order.
        logger.warn({ err: (err as Error).message, jobId: job.id, attempt }, 'routing failed; retrying');
        await sleep(backoffDelay(attempt, DEFAULT_BACKOFF), stopping.signal).catch(() => undefined);
      }
    }
  };

  const worker = new Worker<QueuedJobData>(INGEST_QUEUE, route, {
    connection,
    prefix,
    concurrency: 1,
    lockDuration: opts.lockDurationMs ?? 10_000,
    stalledInterval: Math.max(1000, Math.floor((opts.lockDurationMs ?? 10_000) / 2)),
    // A stalled job must never be failed for stalling: it would leave the queue unrouted.
    maxStalledCount: Number.MAX_SAFE_INTEGER,
    removeOnComplete: { count: 0 },
    removeOnFail: { count: 100_000 },
  });
  worker.on('error', throttledErrorLog(logger, 'router worker'));

  // A backlog moves with its tracker's next job. When a destination is added and no record
  // follows, an empty job is that next job: it takes the ordered path like any other, and extra
  // ones (from several workers) find nothing to move.
  const nudgeBacklogs = async (): Promise<void> => {
    try {
      for (const member of await commands.smembers(backlogIndexKey(prefix))) {
        const { trackerId, partition } = parseBacklogMember(member);
        if ((await routingOf(trackerId)).destinations.length > 0) await queue.add(INGEST_JOB_NAME, newIngestJob(trackerId, [], false, undefined, partition).data);
      }
    } catch (err) {
      logger.debug({ err: (err as Error).message }, 'backlog check failed; next time');
    }
  };
  const backlogTimer = setInterval(() => void nudgeBacklogs(), opts.backlogCheckMs ?? 2000);
  backlogTimer.unref();

  return {
    close: async (graceMs = 5000) => {
      stopping.abort(new Error('router stopping'));
      clearInterval(backlogTimer);
      const graceful = worker.close();
      const timer = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), graceMs).unref());
      if ((await Promise.race([graceful, timer])) === 'timeout') await worker.close(true);
      // The job in hand's read removed the marker (route-run.ts, READ_RUN), and a closing worker
      // fetches no next job: the marker wakes another worker for the jobs left waiting at once,
      // rather than at the end of its blocking wait.
      await commands.zadd(queue.keys.marker!, 0, '0').catch(() => undefined);
      await queue.close();
    },
  };
}
