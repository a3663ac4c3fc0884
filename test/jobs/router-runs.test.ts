import { spawn } from 'node:child_process';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { duplicatesKey, INGEST_QUEUE, newIngestJob, queuedLines, queuedRecordsKey, type IngestJobData } from '../../jobs/routing/ingest-job';
import { JobAdd } from '../../src/ingest/job-add';
import { backlogIndexKey, backlogMember, deliveryKeys, routerCursorKey, trackerBacklogKey } from '../../jobs/delivery/keys';
import { RulesCache } from '../../src/core/rules/compile';
import { MAX_RUN_BYTES, MAX_RUN_JOBS, planRun, readRun, routeRun, type RunJob, type RunSource } from '../../jobs/routing/route-run';
import { startRouter, type Router } from '../../jobs/routing/router';
import { entryRecords, lineTexts } from '../../jobs/routing/stream-entries';
import { createLogger } from '../../src/core/logger';
import { Keyspace } from '../../src/core/redis/keyspace';
import type { TrackedRecord } from '../../src/core/records/types';
import { TrackerStore } from '../../src/core/trackers/store';
import { generateToken } from '../../src/core/trackers/tokens';
import { TrackerSchema, type Destination } from '../../src/core/trackers/types';
import { event } from '../helpers/record-builders';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

/**
 * The router takes the jobs waiting behind the one in hand along as one run: each tracker
 * partition's records of the run in one stream entry per destination, every record once, in the
 * order accepted; a gap in the ids, a tracker without destination and a backlog to move end a run.
 */

/** A record's place: [job number, record number in the job]. */
type Place = [number, number];

interface Spec {
  tracker: string;
  partition?: number;
  records: number;
  dedup?: string;
}

let prefix: string;
let redis: Redis;
let connection: Redis;
let queue: Queue<IngestJobData>;
let store: TrackerStore;
let router: Router | undefined;
let reported: Array<[number, number]>;

beforeEach(async () => {
  prefix = uniquePrefix('runs');
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  connection = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  queue = new Queue<IngestJobData>(INGEST_QUEUE, { connection: redis, prefix });
  store = new TrackerStore(redis, prefix);
  router = undefined;
  reported = [];
});
afterEach(async () => {
  await router?.close(1000);
  await queue.close();
  await deletePrefix(prefix);
  redis.disconnect();
  connection.disconnect();
});

const addTracker = (id: string, destinations: string[]) =>
  store.save(TrackerSchema.parse({ id, name: id, partitions: 3, tokens: [{ token: generateToken() }], destinations: destinations.map((d) => ({ id: d, type: 'local', enabled: false })) }));

/** Job number `job`'s records, each carrying its place. */
const recordsOf = (job: number, count: number): TrackedRecord[] => Array.from({ length: count }, (_, n) => event('run', { job, n }));

/** Adds the jobs in order (ids 1, 2, … in a fresh queue): job number i gets id i + 1. */
async function addJobs(specs: Spec[]): Promise<void> {
  for (const [i, s] of specs.entries()) {
    await new JobAdd(queue).add(newIngestJob(s.tracker, recordsOf(i + 1, s.records), false, s.dedup, s.partition ?? 0));
  }
}

async function start(): Promise<void> {
  router = await startRouter(connection, redis, store, createLogger('silent'), {
    keyspace: new Keyspace(prefix, 1),
    backlogCheckMs: 60_000,
    onRouted: (records, destinations) => reported.push([records, destinations]),
  });
}

/** Until every job is routed and completed. */
async function drained(lastJob: number): Promise<void> {
  await waitFor(async () => (await redis.get(routerCursorKey(prefix))) === String(lastJob), { message: `cursor at ${lastJob}` });
  await waitFor(async () => {
    const counts = await queue.getJobCounts('wait', 'active');
    return counts.wait === 0 && counts.active === 0;
  }, { message: 'every job completed' });
}

const place = (json: string): Place => {
  const { properties } = JSON.parse(json) as { properties: { job: number; n: number } };
  return [properties.job, properties.n];
};

/** A destination's stream as entries, each the places of its records. */
async function entries(tracker: string, destination: string, partition = 0): Promise<Place[][]> {
  const stream = deliveryKeys(prefix, { trackerId: tracker, destinationId: destination, partition }).stream;
  const read = await redis.xrangeBuffer(stream, '-', '+');
  return read.map(([id, fields]) => entryRecords(String(id), fields).map((r) => place(r.json)));
}

/** The places `specs` gives a tracker partition, in job order, but `skip`'s. */
function expected(specs: Spec[], tracker: string, partition: number, skip: Record<number, number[]> = {}): Place[] {
  return specs.flatMap((s, i) => (s.tracker === tracker && (s.partition ?? 0) === partition ? Array.from({ length: s.records }, (_, n): Place => [i + 1, n]).filter(([job, n]) => !skip[job]?.includes(n)) : []));
}

test('jobs waiting when the router starts go out as few entries, every record once, each partition in order', async () => {
  await addTracker('a', ['a1', 'a2']);
  await addTracker('b', ['b1']);
  const specs: Spec[] = Array.from({ length: 240 }, (_, i) => ({ tracker: i % 2 === 0 ? 'a' : 'b', partition: Math.floor(i / 2) % 3, records: 1 + (i % 3) }));
  await addJobs(specs);
  await start();
  await drained(specs.length);

  const runs = Math.ceil(specs.length / MAX_RUN_JOBS);
  for (const [tracker, destinations] of [['a', ['a1', 'a2']], ['b', ['b1']]] as const) {
    for (const partition of [0, 1, 2]) {
      for (const destination of destinations) {
        const written = await entries(tracker, destination, partition);
        // 40 jobs of this partition, in at most one entry a run.
        expect(written.length).toBeLessThanOrEqual(runs);
        expect(written.flat()).toEqual(expected(specs, tracker, partition));
        const queued = deliveryKeys(prefix, { trackerId: tracker, destinationId: destination, partition }).queued;
        expect(Number(await redis.get(queued))).toBe(written.flat().length);
      }
    }
  }
  // Reported once per job, with its records and its tracker's destinations.
  expect(reported).toEqual(specs.map((s) => [s.records, s.tracker === 'a' ? 2 : 1]));
});

test('the duplicates of a job in a run are skipped and its list deleted with the routing', async () => {
  await addTracker('a', ['a1']);
  const specs: Spec[] = [
    { tracker: 'a', records: 3, dedup: 'first' },
    { tracker: 'a', records: 2 },
    { tracker: 'a', records: 4, dedup: 'middle' },
    { tracker: 'a', records: 2, dedup: 'none-duplicate' },
    { tracker: 'a', records: 3, dedup: 'last' },
  ];
  await redis.set(duplicatesKey(prefix, 'first'), '0');
  await redis.set(duplicatesKey(prefix, 'middle'), '1,2');
  await redis.set(duplicatesKey(prefix, 'last'), '2');
  await addJobs(specs);
  await start();
  await drained(specs.length);

  const written = await entries('a', 'a1');
  expect(written).toEqual([expected(specs, 'a', 0, { 1: [0], 3: [1, 2], 5: [2] })]);
  expect(await redis.exists(duplicatesKey(prefix, 'first'), duplicatesKey(prefix, 'middle'), duplicatesKey(prefix, 'last'))).toBe(0);
  expect(reported.map(([records]) => records)).toEqual([2, 2, 2, 2, 2]);
});

test('a gap in the job ids ends a run', async () => {
  await addTracker('a', ['a1']);
  const specs: Spec[] = Array.from({ length: 10 }, () => ({ tracker: 'a', records: 2 }));
  await addJobs(specs);
  // Job 5 leaves the queue (an operator removed it): the run of job 1 stops before it.
  await (await queue.getJob('5'))!.remove();
  await start();
  await drained(10);

  const all = expected(specs, 'a', 0);
  expect(await entries('a', 'a1')).toEqual([all.filter(([job]) => job < 5), all.filter(([job]) => job > 5)]);
});

test('a job held outside the wait list is never passed over: the run is the contiguous ids only', async () => {
  await addTracker('a', ['a1']);
  await addJobs(Array.from({ length: 8 }, () => ({ tracker: 'a', records: 1 })));
  // Job 1 in hand; job 4 held by another worker (as after a lost lock); 2, 3, 5… waiting.
  await redis.rpoplpush(queue.keys.wait!, queue.keys.active!);
  await redis.lrem(queue.keys.wait!, 1, '4');
  await redis.lpush(queue.keys.active!, '4');
  const destinations: Destination[] = (await store.get('a'))!.destinations;
  const source: RunSource = { commands: redis, prefix, waitKey: queue.keys.wait!, markerKey: queue.keys.marker!, jobPrefix: queue.toKey(''), routingOf: async () => ({ destinations, archive: false }) };
  const data = (await queue.getJob('1'))!.data;
  const read = await readRun(source, 1, MAX_RUN_JOBS - 1, MAX_RUN_BYTES);
  const run = await planRun(source, { id: 1, data, destinations, archive: false, lines: queuedLines('1', data, read.inHand), exact: false }, read.behind);
  expect(run.map((j) => j.id)).toEqual([1, 2, 3]);
  expect(run.map((j) => place(lineTexts(j.lines)[0]!)[0])).toEqual([1, 2, 3]);
});

test('jobs of a run whose worker died before BullMQ completed them are not routed again', async () => {
  await addTracker('a', ['a1']);
  const specs: Spec[] = Array.from({ length: 9 }, (_, i) => ({ tracker: 'a', records: 2, ...(i === 3 ? { dedup: 'merged' } : {}) }));
  await redis.set(duplicatesKey(prefix, 'merged'), '1');
  await addJobs(specs);
  // What a worker killed right after routing jobs 1–6 as a run leaves: the run in the streams and
  // the cursor, and every job still in the queue (job 1 back from active after its lock expired).
  const destinations: Destination[] = (await store.get('a'))!.destinations;
  const run: RunJob[] = await Promise.all([1, 2, 3, 4, 5, 6].map(async (id) => {
    const data = (await queue.getJob(String(id)))!.data;
    const skip = id === 4 ? new Set([1]) : undefined;
    const lines = await redis.getBuffer(queuedRecordsKey(queue.toKey(String(id))));
    return { id, data, destinations, archive: false, lines: queuedLines(String(id), data, lines, skip), exact: false, skip };
  }));
  expect(await routeRun(redis, prefix, queue.toKey(''), routerCursorKey(prefix), run, new RulesCache())).toEqual({ kind: 'routed' });
  expect(await redis.exists(duplicatesKey(prefix, 'merged'))).toBe(0);
  // The run's records went with the routing; the jobs behind it keep theirs.
  expect(await redis.exists(...[1, 2, 3, 4, 5, 6].map((id) => queuedRecordsKey(queue.toKey(String(id)))))).toBe(0);
  expect(await redis.exists(queuedRecordsKey(queue.toKey('7')))).toBe(1);
  await start();
  await drained(9);

  const all = expected(specs, 'a', 0, { 4: [1] });
  expect(await entries('a', 'a1')).toEqual([all.filter(([job]) => job <= 6), all.filter(([job]) => job > 6)]);
  // Only what this router routed is reported: jobs 7–9.
  expect(reported).toEqual([[2, 1], [2, 1], [2, 1]]);
});

test('a run ends at its record budget; the next job starts the next run', async () => {
  await addTracker('a', ['a1']);
  const specs: Spec[] = Array.from({ length: 4 }, () => ({ tracker: 'a', records: 900 }));
  await addJobs(specs);
  await start();
  await drained(4);
  const written = await entries('a', 'a1');
  expect(written.map((e) => e.length)).toEqual([1800, 1800]);
  expect(written.flat()).toEqual(expected(specs, 'a', 0));
});

test('a tracker without destination, or with a backlog to move, takes the one-job path in the middle of a run', async () => {
  await addTracker('a', ['a1']);
  await addTracker('none', []);
  await addTracker('c', ['c1']);
  // c's backlog from before it had a destination: it goes out ahead of c's next records.
  const parked = recordsOf(0, 2).map((r) => JSON.stringify(r));
  for (const json of parked) await redis.xadd(trackerBacklogKey(prefix, 'c'), '*', 'r', json);
  await redis.sadd(backlogIndexKey(prefix), backlogMember({ trackerId: 'c', partition: 0 }));
  const specs: Spec[] = [
    { tracker: 'a', records: 2 },
    { tracker: 'a', records: 1 },
    { tracker: 'none', records: 3 },
    { tracker: 'a', records: 2 },
    { tracker: 'c', records: 2 },
    { tracker: 'a', records: 1 },
  ];
  await addJobs(specs);
  await start();
  await drained(specs.length);

  const a = expected(specs, 'a', 0);
  const of = (...jobs: number[]) => a.filter(([job]) => jobs.includes(job));
  // 1–2 a run; 3 to the backlog; 4–6 cut before c's job, whose backlog moves first; 6 alone.
  expect(await entries('a', 'a1')).toEqual([of(1, 2), of(4), of(6)]);
  const backlog = await redis.xrange(trackerBacklogKey(prefix, 'none'), '-', '+');
  expect(backlog.map(([, fields]) => place(fields[1]!))).toEqual(expected(specs, 'none', 0));
  expect(await redis.smembers(backlogIndexKey(prefix))).toEqual(['none']);
  expect((await entries('c', 'c1')).flat()).toEqual([[0, 0], [0, 1], ...expected(specs, 'c', 0)]);
  expect(await redis.exists(trackerBacklogKey(prefix, 'c'))).toBe(0);
});

/**
 * Counts the blocking waits (`BZPOPMIN`) on `markerKey` that Redis sees from any client, by
 * `redis-cli monitor` (ioredis' own monitor mode trips over other tests' traffic on the shared Redis).
 */
async function monitorWaits(markerKey: string): Promise<{ stop: () => Promise<number> }> {
  const child = spawn('redis-cli', ['-u', TEST_REDIS_URL, 'monitor'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let count = 0;
  let rest = '';
  const needle = `"bzpopmin" "${markerKey}"`;
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.stdout.on('data', (chunk: Buffer) => {
      const lines = (rest + chunk.toString()).split('\n');
      rest = lines.pop()!;
      for (const line of lines) {
        if (line.trim() === 'OK') resolve();
        else if (line.toLowerCase().includes(needle.toLowerCase())) count++;
      }
    });
  });
  return {
    stop: async () => {
      // What Redis ran last reaches the monitor a moment later.
      await new Promise((resolve) => setTimeout(resolve, 100));
      child.kill();
      return count;
    },
  };
}

test('jobs that come one at a time cost BullMQ one blocking wait each, and a closing router leaves the marker set', async () => {
  await addTracker('a', ['a1']);
  await start();
  const markerKey = queue.keys.marker!;
  const waits = await monitorWaits(markerKey);
  const jobs = 12;
  for (let i = 1; i <= jobs; i++) {
    await new JobAdd(queue).add(newIngestJob('a', recordsOf(i, 2), false));
    await drained(i);
    // The worker is back in its blocking wait (or on its way): the next job finds it there.
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
  const count = await waits.stop();
  // BullMQ marks the queue each time it hands a job over; left there, the worker's next wait
  // returned at once on it and led to a fetch that found nothing: two waits a job.
  expect(count).toBeGreaterThanOrEqual(jobs);
  expect(count).toBeLessThanOrEqual(jobs + 2);
  expect((await entries('a', 'a1')).flat()).toEqual(Array.from({ length: jobs }, (_, j) => [[j + 1, 0], [j + 1, 1]] as Place[]).flat());

  await router!.close(1000);
  router = undefined;
  expect(await redis.zscore(markerKey, '0')).toBe('0');
});
