import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Job } from 'bullmq';
import supertest from 'supertest';
import { loadConfig, type Config } from '../../src/core/config';
import { createLogger } from '../../src/core/logger';
import { createMetrics } from '../../src/core/metrics';
import type { QueuedJobData } from '../../jobs/routing/ingest-job';
import { queuedJobRecords } from './queued-jobs';
import { readDuplicates } from '../../jobs/routing/route-run';
import type { TrackedRecord } from '../../src/core/records/types';
import { openApiRuntime, type AdminOptions, type ApiRuntime } from '../../src/boot/api-runtime';
import { generateToken } from '../../src/core/trackers/tokens';
import { TrackerSchema, type Tracker } from '../../src/core/trackers/types';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from './redis';

export interface TestApi {
  runtime: ApiRuntime;
  config: Readonly<Config>;
  prefix: string;
  http: ReturnType<typeof supertest>;
  tracker: Tracker;
  token: string;
  /** Adds another tracker to the store. */
  addTracker: (fields?: Partial<Tracker>) => Promise<{ tracker: Tracker; token: string }>;
  /** Every record queued so far, in queue order. */
  queuedRecords: () => Promise<Array<TrackedRecord & { trackerId: string }>>;
  /** The records queued so far that the router delivers: those not marked as repeats of a client key. */
  storedRecords: () => Promise<Array<TrackedRecord & { trackerId: string }>>;
  close: () => Promise<void>;
}

/** `admin` turns the admin API on (see test/helpers/admin-api.ts). */
export async function startTestApi(env: Record<string, string> = {}, trackerFields: Partial<Tracker> = {}, redisUrl = TEST_REDIS_URL, admin?: AdminOptions): Promise<TestApi> {
  const prefix = uniquePrefix('api');
  // A data directory of its own unless the test names one: spools and archives of two tests never meet.
  const ownDataDir = env.DATA_DIR === undefined ? mkdtempSync(path.join(tmpdir(), 'tributary-api-')) : undefined;
  const config = loadConfig({ REDIS_PREFIX: prefix, LOG_LEVEL: 'silent', ...(ownDataDir ? { DATA_DIR: ownDataDir } : {}), ...env });
  const runtime = await openApiRuntime(config, redisUrl, createLogger('silent'), { metrics: createMetrics(false), admin });

  let n = 0;
  const addTracker = async (fields: Partial<Tracker> = {}) => {
    const token = generateToken();
    const tracker = TrackerSchema.parse({ id: `trk-${++n}`, name: `Tracker ${n}`, tokens: [{ token }], ...fields });
    await runtime.store.save(tracker);
    return { tracker, token: tracker.tokens[0]!.token };
  };
  const { tracker, token } = await addTracker(trackerFields);

  const jobsOf = async (shard: number) => {
    const queue = runtime.queues[shard]!;
    const jobs = (await queue.getJobs(['waiting', 'prioritized', 'delayed', 'active', 'completed'], 0, -1, true)) as Array<Job<QueuedJobData>>;
    const sorted = jobs.sort((a, b) => Number(a.id) - Number(b.id));
    return Promise.all(sorted.map(async (job) => ({ data: job.data, records: await queuedJobRecords(runtime.redis, queue, job) })));
  };
  const recordsOf = (job: { data: QueuedJobData; records: TrackedRecord[] }, skip?: Set<number>) => job.records.filter((_, i) => !skip?.has(i)).map((record) => ({ ...record, trackerId: job.data.trackerId }));
  return {
    runtime,
    config,
    prefix,
    http: supertest(runtime.app.callback()),
    tracker,
    token,
    addTracker,
    queuedRecords: async () => {
      const perShard = await Promise.all(runtime.queues.map((_, shard) => jobsOf(shard)));
      return perShard.flat().flatMap((job) => recordsOf(job));
    },
    storedRecords: async () => {
      const perShard = await Promise.all(
        runtime.queues.map(async (_, shard) => {
          const jobs = await jobsOf(shard);
          const skips = await readDuplicates(runtime.redis, config.keyspace.shardPrefix(shard), jobs.map((job) => job.data));
          return jobs.flatMap((job, i) => recordsOf(job, skips[i]));
        }),
      );
      return perShard.flat();
    },
    close: async () => {
      await runtime.close();
      await deletePrefix(prefix, redisUrl);
      if (ownDataDir) rmSync(ownDataDir, { recursive: true, force: true });
    },
  };
}
