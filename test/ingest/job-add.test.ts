import { Queue, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { duplicatesKey, INGEST_QUEUE, queuedRecordsKey, type IngestJobData } from '../../jobs/routing/ingest-job';
import type { TrackedRecord } from '../../src/core/records/types';
import { BUCKET_HOURS, bucketStartHour, dedupMember, seenBucketKey } from '../../src/ingest/dedup';
import { IngestWriter } from '../../src/ingest/ingest-writer';
import { JobAdd } from '../../src/ingest/job-add';
import { queuedJobRecords } from '../helpers/queued-jobs';
import { Keyspace } from '../../src/core/redis/keyspace';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis';

/**
 * A write is BullMQ's add, the job's records and, with client keys, the dedup markers in one script:
 * checked on real Redis by what the server was sent (MONITOR) and by what the queue then holds.
 */
const prefix = uniquePrefix('job-add');
let redis: Redis;
let monitorConnection: Redis;
let queue: Queue<IngestJobData>;
let writer: IngestWriter;

beforeAll(async () => {
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  monitorConnection = new Redis(TEST_REDIS_URL);
  queue = new Queue<IngestJobData>(INGEST_QUEUE, { connection: redis, prefix });
  await queue.waitUntilReady();
  writer = new IngestWriter([new JobAdd(queue)], { timeoutMs: 5000, maxBatchRecords: 1000, maxInflight: 4, retryAfterSeconds: 1, keyspace: new Keyspace(prefix, 1), isConnected: () => redis.status === 'ready' });
});
afterAll(async () => {
  await writer.close();
  await queue.close();
  monitorConnection.disconnect();
  redis.disconnect();
  await deletePrefix(prefix);
});

const withRecords = (jobs: Array<Job<IngestJobData>>) => Promise.all(jobs.map(async (job) => ({ job, records: await queuedJobRecords(redis, queue, job) })));
const event = (id: string): TrackedRecord => ({ kind: 'event', id, receivedAt: '2026-11-25T00:00:00.000Z', event: 'signup', properties: { n: 1 } });
const keyed = (records: TrackedRecord[]) => ({ windowHours: 24, members: records.map((r) => dedupMember(r.kind, r.id)) });

/** The commands sent by clients (not by scripts) about this test's keys while `run` ran, by name. */
async function commandsDuring(run: () => Promise<unknown>): Promise<string[]> {
  const monitor = await monitorConnection.monitor();
  // Lines of other tests' traffic still arriving as the monitor disconnects make ioredis report a
  // "command queue state error" on it: nothing this test reads.
  monitor.on('error', () => undefined);
  const seen: string[] = [];
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    // Commands a script runs are shown too, from the source "lua": only the client's own count.
    if (source !== 'lua' && args.some((a) => a.includes(prefix))) seen.push(args[0]!.toUpperCase());
  });
  try {
    await run();
    // MONITOR's feed trails the replies a little.
    await new Promise((r) => setTimeout(r, 100));
  } finally {
    monitor.disconnect();
  }
  return seen;
}

test('one script call per keyed write, no MULTI: the job and its markers enter Redis together', async () => {
  // A first write loads the script (EVALSHA answered NOSCRIPT, then EVAL) and BullMQ's queue meta.
  await writer.write({ trackerId: 'warm-up', partitions: 1 }, [event('w-1')], keyed([event('w-1')]));
  const records = [event('k-1'), event('k-2')];
  const sent = await commandsDuring(() => writer.write({ trackerId: 't1', partitions: 1 }, records, keyed(records)));
  expect(sent).toEqual(['EVALSHA']);

  const jobs = (await queue.getJobs(['wait'])).filter((j) => j.data.trackerId === 't1');
  expect(jobs).toHaveLength(1);
  expect(jobs[0]!.data).toEqual({ v: 2, trackerId: 't1', n: 2, at: '2026-11-25T00:00:00.000Z', dedup: expect.any(String) });
  expect((await queuedJobRecords(redis, queue, jobs[0]!)).map((r) => r.id)).toEqual(['k-1', 'k-2']);
  expect(jobs[0]!.data.dedup).toEqual(expect.any(String));
  const buckets = await redis.keys(`${prefix}:seen:t1:*`);
  expect(buckets).toHaveLength(1);
  expect(await redis.scard(buckets[0]!)).toBe(2);
  expect(await redis.pttl(buckets[0]!)).toBeGreaterThan(24 * 3_600_000);
});

test('a retried key is answered as a duplicate and its index listed for the router, beside a new one', async () => {
  const records = [event('k-2'), event('k-3')];
  const duplicates = await writer.write({ trackerId: 't1', partitions: 1 }, records, keyed(records));
  expect(duplicates).toEqual([true, false]);
  const jobs = await queue.getJobs(['wait']);
  const latest = (await withRecords(jobs)).find((j) => j.records[0]!.id === 'k-2')!.job;
  expect(await redis.get(duplicatesKey(prefix, latest.data.dedup!))).toBe('0');
});

test('keyed and unkeyed trackers in one flush: each gets its own job, the keyed one its markers', async () => {
  const before = await queue.count();
  const a = [event('m-1')];
  const b = [event('plain-1')];
  const [da, db] = await Promise.all([writer.write({ trackerId: 't2', partitions: 1 }, a, keyed(a)), writer.write({ trackerId: 't3', partitions: 1 }, b)]);
  expect(da).toEqual([false]);
  expect(db).toBeUndefined();
  expect(await queue.count()).toBe(before + 2);
  expect(await redis.keys(`${prefix}:seen:t3:*`)).toEqual([]);
});

test('a key remembered in an older set of the window is a duplicate; one older than the window is not', async () => {
  const current = bucketStartHour(Date.now());
  // Within the 24 hours for certain, and past them for certain, wherever in its 4 hours the test runs.
  await redis.sadd(seenBucketKey(prefix, 't4', current - BUCKET_HOURS * 3), dedupMember('event', 'old-1'));
  await redis.sadd(seenBucketKey(prefix, 't4', current - BUCKET_HOURS * 8), dedupMember('event', 'older-1'));
  const records = [event('new-1'), event('old-1'), event('older-1')];
  expect(await writer.write({ trackerId: 't4', partitions: 1 }, records, keyed(records))).toEqual([false, true, false]);
  const jobs = (await queue.getJobs(['wait'])).filter((j) => j.data.trackerId === 't4');
  expect(await redis.get(duplicatesKey(prefix, jobs[0]!.data.dedup!))).toBe('1');
});

test('keyed records among unkeyed ones: the duplicates are listed by their index in the job', async () => {
  const first = [event('mix-1')];
  await writer.write({ trackerId: 't5', partitions: 1 }, first, keyed(first));
  const records = [event('plain-a'), event('mix-2'), event('plain-b'), event('mix-1')];
  const members = [undefined, dedupMember('event', 'mix-2'), undefined, dedupMember('event', 'mix-1')];
  expect(await writer.write({ trackerId: 't5', partitions: 1 }, records, { windowHours: 24, members })).toEqual([false, false, false, true]);
  const job = (await withRecords(await queue.getJobs(['wait']))).find((j) => j.records[0]!.id === 'plain-a')!.job;
  expect(await redis.get(duplicatesKey(prefix, job.data.dedup!))).toBe('3');
});

test('an unkeyed write adds the job with its records beside it, integers beyond 2^53 with every digit', async () => {
  const records = [event('u-1'), { ...event('u-2'), properties: { big: 12345678901234567890n } }];
  expect(await writer.write({ trackerId: 't6', partitions: 1 }, records, undefined, true)).toBeUndefined();
  const job = (await queue.getJobs(['wait'])).find((j) => j.data.trackerId === 't6')!;
  expect(job.data).toEqual({ v: 2, trackerId: 't6', n: 2, at: '2026-11-25T00:00:00.000Z', x: 1 });
  expect(await queuedJobRecords(redis, queue, job)).toEqual(records);
  expect(await redis.get(queuedRecordsKey(queue.toKey(job.id!)))).toContain('"big":12345678901234567890');
});
