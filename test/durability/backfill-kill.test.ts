import path from 'node:path';
import { Queue } from 'bullmq';
import { queryWarehouse } from '../../connectors/local';
import { readArchiveStatus } from '../../jobs/history/archive-status';
import { backfillProgress, startBackfill } from '../../jobs/history/backfill';
import { INGEST_QUEUE, newIngestJob, type IngestJobData } from '../../jobs/routing/ingest-job';
import { JobAdd } from '../../src/ingest/job-add';
import { Keyspace } from '../../src/core/redis/keyspace';
import { TrackerStore } from '../../src/core/trackers/store';
import { generateToken } from '../../src/core/trackers/tokens';
import { TrackerSchema } from '../../src/core/trackers/types';
import { event } from '../helpers/record-builders';
import { tributaryProcesses } from '../helpers/tributary-process';
import { waitFor } from '../helpers/wait';

/**
 * A worker killed with SIGKILL in the middle of a backfill: the next one takes the archive over and
 * goes on from the position saved with the last chunk, and the destination ends with every archived
 * event once.
 */
jest.setTimeout(150_000);

const EVENTS = 20_000;
const { prefix, dataDir, redis, spawn } = tributaryProcesses('bfkill', { DELIVERY_LEASE_MS: '1500', DELIVERY_DISCOVER_INTERVAL_MS: '100' });
const keyspace = new Keyspace(prefix, 1);
const store = new TrackerStore(redis, prefix);

async function count(file: string): Promise<number[] | undefined> {
  try {
    const { rows } = await queryWarehouse(path.join(dataDir, 'warehouse', file), 'SELECT count(*)::INT, count(DISTINCT _id)::INT FROM events');
    return rows[0] as number[];
  } catch {
    return undefined;
  }
}

test('a worker killed mid-backfill: the next one resumes, every event once', async () => {
  await store.save(TrackerSchema.parse({ id: 'shop', name: 'Shop', tokens: [{ token: generateToken() }], destinations: [{ id: 'wh', type: 'local' }] }));
  const queue = new Queue<IngestJobData>(INGEST_QUEUE, { connection: redis, prefix });
  const adder = new JobAdd(queue);
  for (let from = 0; from < EVENTS; from += 500) {
    await adder.add(newIngestJob('shop', Array.from({ length: 500 }, (_, i) => event('order', { n: from + i })), false));
  }
  await queue.close();
  let worker = spawn('worker');
  await waitFor(async () => (await readArchiveStatus(redis, keyspace, { id: 'shop', partitions: 1, archiveDays: 30 })).records === EVENTS, { timeoutMs: 60_000, message: 'every event archived' });

  await store.update('shop', (t) => ({ ...t, destinations: [...t.destinations, { id: 'later', type: 'local', enabled: true, settings: { path: 'warehouse/later.duckdb' } }] }));
  const tracker = (await store.get('shop'))!;
  // The record builder dates events from 2026-01-01.
  await startBackfill(redis, keyspace, tracker, 'later', { since: new Date('2025-12-31T00:00:00Z'), until: new Date(), resources: ['events'] });
  await waitFor(async () => ((await backfillProgress(redis, keyspace, tracker, 'later'))?.read ?? 0) > 0, { timeoutMs: 30_000, intervalMs: 5, message: 'the backfill under way' });
  await worker.stop('SIGKILL');

  worker = spawn('worker');
  await waitFor(async () => {
    const p = await backfillProgress(redis, keyspace, tracker, 'later');
    return p?.state === 'done' && p.waiting === 0;
  }, { timeoutMs: 90_000, intervalMs: 200, message: 'the backfill done and delivered' });
  expect(await waitFor(async () => {
    const c = await count('later.duckdb');
    return c?.[0] === EVENTS ? c : undefined;
  }, { timeoutMs: 30_000, message: `${EVENTS} events in later` })).toEqual([EVENTS, EVENTS]);
  await worker.stop();
});
