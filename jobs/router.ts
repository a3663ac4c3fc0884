import { Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from '../src/logger';
import { INGEST_QUEUE, type IngestJobData } from '../src/queue/ingest-job';
import type { TrackerStore } from '../src/trackers/store';
import type { Tracker } from '../src/trackers/types';
import { backoffDelay, DEFAULT_BACKOFF, sleep } from './backoff';
import { deliveryKeys, routerCursorKey } from './keys';

// Appends a job's records to the stream of each destination, once: jobs are routed strictly in
// id order, so a job whose id is not above the last routed one was routed already (the worker
// died before BullMQ marked it complete).
const ROUTE = `
local last = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) <= last then return 0 end
for i = 2, #KEYS do
  for j = 2, #ARGV do redis.call('XADD', KEYS[i], '*', 'r', ARGV[j]) end
end
redis.call('SET', KEYS[1], ARGV[1])
return 1`;

export interface RouterOptions {
  redisPrefix: string;
  /** How long a tracker's destination list is cached. Default 1000 ms. */
  trackerCacheMs?: number;
  /** A job whose worker stopped renewing its lock is taken back after this long. Default 10 s. */
  lockDurationMs?: number;
  onRouted?: (records: number, destinations: number) => void;
}

/**
 * Fans the ingest queue out to per-destination streams. One job at a time across every worker
 * (BullMQ global concurrency 1), and a failure is retried in place rather than handed back to
 * BullMQ, because BullMQ would retry it after later jobs and break the accepted order.
 * A stalled job goes back to the head of the queue (BullMQ pushes it on the consuming end).
 */
export async function startRouter(connection: Redis, commands: Redis, store: TrackerStore, logger: Logger, opts: RouterOptions): Promise<{ close: (graceMs?: number) => Promise<void> }> {
  const queue = new Queue<IngestJobData>(INGEST_QUEUE, { connection, prefix: opts.redisPrefix });
  await queue.setGlobalConcurrency(1);
  await queue.close();

  const stopping = new AbortController();
  const cache = new Map<string, { tracker: Tracker | undefined; until: number }>();
  const trackerFor = async (id: string): Promise<Tracker | undefined> => {
    const hit = cache.get(id);
    if (hit && hit.until > Date.now()) return hit.tracker;
    const tracker = await store.get(id);
    cache.set(id, { tracker, until: Date.now() + (opts.trackerCacheMs ?? 1000) });
    return tracker;
  };

  const route = async (job: Job<IngestJobData>): Promise<void> => {
    for (let attempt = 0; ; attempt++) {
      try {
        const tracker = await trackerFor(job.data.trackerId);
        const destinations = tracker?.destinations.filter((d) => d.enabled) ?? [];
        if (destinations.length === 0) {
          logger.warn({ trackerId: job.data.trackerId, records: job.data.records.length }, 'no enabled destination: records not delivered anywhere');
          opts.onRouted?.(job.data.records.length, 0);
          return;
        }
        const streams = destinations.map((d) => deliveryKeys(opts.redisPrefix, { trackerId: job.data.trackerId, destinationId: d.id }).stream);
        const records = job.data.records.map((r) => JSON.stringify(r));
        await commands.eval(ROUTE, 1 + streams.length, routerCursorKey(opts.redisPrefix), ...streams, job.id!, ...records);
        opts.onRouted?.(records.length, destinations.length);
        return;
      } catch (err) {
        // Never throw: BullMQ would fail the job (or retry it behind later ones). When stopping, the
        // process exits with the job still locked; it stalls and is routed first by the next worker.
        logger.warn({ err: (err as Error).message, jobId: job.id, attempt }, 'routing failed; retrying');
        await sleep(backoffDelay(attempt, DEFAULT_BACKOFF), stopping.signal.aborted ? undefined : stopping.signal).catch(() => undefined);
      }
    }
  };

  const worker = new Worker<IngestJobData>(INGEST_QUEUE, route, {
    connection,
    prefix: opts.redisPrefix,
    concurrency: 1,
    lockDuration: opts.lockDurationMs ?? 10_000,
    stalledInterval: Math.max(1000, Math.floor((opts.lockDurationMs ?? 10_000) / 2)),
    // A stalled job must never be failed for stalling: it would leave the queue unrouted.
    maxStalledCount: Number.MAX_SAFE_INTEGER,
    removeOnComplete: { count: 0 },
    removeOnFail: { count: 100_000 },
  });
  worker.on('error', (err) => logger.warn({ err: err.message }, 'router worker error'));

  return {
    /** Waits up to `graceMs` for the job in hand, then lets go of it (it stalls and is taken back). */
    close: async (graceMs = 5000) => {
      stopping.abort(new Error('router stopping'));
      const graceful = worker.close();
      const timer = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), graceMs).unref());
      if ((await Promise.race([graceful, timer])) === 'timeout') await worker.close(true);
    },
  };
}
