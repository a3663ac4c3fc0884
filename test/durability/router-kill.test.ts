import { Queue } from 'bullmq';
import { INGEST_QUEUE, newIngestJob, type IngestJobData } from '../../jobs/routing/ingest-job';
import { JobAdd } from '../../src/ingest/job-add';
import { deliveryKeys, routerCursorKey } from '../../jobs/delivery/keys';
import { entryRecords } from '../../jobs/routing/stream-entries';
import { TrackerStore } from '../../src/core/trackers/store';
import { generateToken } from '../../src/core/trackers/tokens';
import { TrackerSchema } from '../../src/core/trackers/types';
import { event } from '../helpers/record-builders';
import { tributaryProcesses } from '../helpers/tributary-process';
import { waitFor } from '../helpers/wait';

/**
 * A queue of small jobs routed in runs (jobs/routing/route-run.ts) by worker processes killed with
 * SIGKILL one after another mid-way: whatever each was doing — reading a run, routing it,
 * completing the jobs it had merged — every record is in its partition's stream exactly once and
 * in the order accepted.
 */
jest.setTimeout(150_000);

const JOBS = 3000;
const PARTITIONS = 3;
const KILLS = 3;

const { prefix, redis, spawn } = tributaryProcesses('rkill', { ROUTER_LOCK_MS: '1000' });
const worker = () => spawn('worker');
const cursor = async () => Number(await redis.get(routerCursorKey(prefix)));

test(`${KILLS} routing workers killed mid-queue: every record once, each partition in order`, async () => {
  await new TrackerStore(redis, prefix).save(
    TrackerSchema.parse({ id: 'shop', name: 'Shop', partitions: PARTITIONS, tokens: [{ token: generateToken() }], destinations: [{ id: 'wh', type: 'local', enabled: false }] }),
  );
  const queue = new Queue<IngestJobData>(INGEST_QUEUE, { connection: redis, prefix });
  // Jobs as the edge writes them (records beside each job), added one after the other.
  const adder = new JobAdd(queue);
  for (let job = 0; job < JOBS; job++) await adder.add(newIngestJob('shop', [event('k', { job }), event('k', { job, second: true })], false, undefined, job % PARTITIONS));
  await queue.close();

  for (let k = 1; k <= KILLS; k++) {
    const proc = worker();
    const past = ((k * JOBS) / (KILLS + 1)) | 0;
    await waitFor(async () => (await cursor()) > past, { timeoutMs: 60_000, intervalMs: 5, message: `routing past job ${past}` });
    await proc.stop('SIGKILL');
  }
  worker();
  await waitFor(async () => (await cursor()) === JOBS, { timeoutMs: 60_000, message: 'every job routed' });

  for (let p = 0; p < PARTITIONS; p++) {
    const keys = deliveryKeys(prefix, { trackerId: 'shop', destinationId: 'wh', partition: p });
    const read = await redis.xrangeBuffer(keys.stream, '-', '+');
    const jobs = read.flatMap(([id, fields]) => entryRecords(String(id), fields).map((r) => (JSON.parse(r.json) as { properties: { job: number } }).properties.job));
    const mine = Array.from({ length: JOBS }, (_, j) => j).filter((j) => j % PARTITIONS === p);
    expect(jobs).toEqual(mine.flatMap((j) => [j, j]));
    expect(Number(await redis.get(keys.queued))).toBe(jobs.length);
    // Runs, not one entry a job.
    expect(read.length).toBeLessThan(mine.length / 4);
  }
});
