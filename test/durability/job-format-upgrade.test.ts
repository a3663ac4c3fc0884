import { randomUUID } from 'node:crypto';
import { ConnectorRegistry } from '../../connectors/registry';
import { duplicatesKey, INGEST_JOB_NAME, queuedRecordsKey } from '../../jobs/routing/ingest-job';
import { startWorkerRuntime, type WorkerRuntime } from '../../jobs/worker-runtime';
import { createLogger } from '../../src/core/logger';
import { partitionOf } from '../../src/core/redis/keyspace';
import type { TrackedRecord } from '../../src/core/records/types';
import { startTestApi, type TestApi } from '../helpers/api';
import { FAST_WORKER } from '../helpers/fast-worker';
import { ingestJobDataV1 } from '../helpers/ingest-job-v1';
import { createMemoryConnector, memoryDestination } from '../helpers/memory-connector';
import { TEST_REDIS_URL } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

/**
 * A relay upgraded while jobs of the earlier ingest job format wait in Redis: the upgraded one
 * routes them beside the jobs it writes itself (in the same runs), and every record reaches the
 * destination once, in order within its partition. A job of a later format is left queued, with
 * an error that says so, and nothing after it in its shard is passed over.
 */

const PARTITIONS = 3;
let api: TestApi;
let worker: WorkerRuntime | undefined;
let logs: string[];

const event = (uid: string, n: number, properties: TrackedRecord['properties'] = {}): TrackedRecord => ({
  kind: 'event',
  id: randomUUID(),
  receivedAt: '2026-11-29T00:00:00.000Z',
  eventAt: '2026-11-29T00:00:00.000Z',
  event: 'e',
  uid,
  properties: { source: 'v1', n, ...properties },
});

beforeEach(async () => {
  const name = `upgrade-${randomUUID()}`;
  api = await startTestApi({}, { partitions: PARTITIONS, destinations: [{ id: 'm', type: 'memory', enabled: true, settings: { name } }] });
  logs = [];
});
afterEach(async () => {
  await worker?.close();
  worker = undefined;
  await api.close();
});

async function startWorker(): Promise<void> {
  const logger = createLogger('warn', { write: (line: string) => void logs.push(line) });
  worker = await startWorkerRuntime(api.config, TEST_REDIS_URL, new ConnectorRegistry([createMemoryConnector() as never]), logger, FAST_WORKER);
}

const destination = () => memoryDestination((api.tracker.destinations[0]!.settings as { name: string }).name);

test('jobs queued in format 1 before the upgrade and format 2 after it: every record once, in order within each partition', async () => {
  const queue = api.runtime.queues[0]!;
  const old: TrackedRecord[] = [];
  let n = 0;
  // What the earlier relay left queued: 24 jobs of 5 records over the partitions, one with integers
  // beyond 2^53 (its `exact` texts), one keyed whose second record was a duplicate.
  for (let j = 0; j < 24; j++) {
    const records = Array.from({ length: 5 }, () => event(`u-${j % 7}`, n++, j === 4 ? { big: 12345678901234567890n } : {}));
    const partition = partitionOf(records[0]!, PARTITIONS);
    const dedup = j === 7 ? `old-${randomUUID()}` : undefined;
    if (dedup) await api.runtime.redis.set(duplicatesKey(api.prefix, dedup), '1');
    await queue.add(INGEST_JOB_NAME, ingestJobDataV1(api.tracker.id, records, j === 4, dedup, partition) as never);
    old.push(...records.filter((_, i) => !(dedup && i === 1)));
  }
  // The upgraded relay's edge takes more (format 2) before any worker runs, so runs mix both.
  const fresh: string[] = [];
  for (let r = 0; r < 20; r++) {
    const body = Array.from({ length: 3 }, () => ({ _event: 'e', _uid: `u-${n % 7}`, source: 'v2', n: n++ }));
    const res = await api.http.post('/v3/event').set('Authorization', `Tracker ${api.token}`).send(body);
    expect(res.status).toBe(202);
    fresh.push(...(res.body.results as Array<{ id: string }>).map((r) => r.id));
  }
  expect(await api.runtime.redis.keys(queuedRecordsKey(`${queue.toKey('')}*`))).not.toHaveLength(0);

  await startWorker();
  const expected = [...old.map((r) => r.id), ...fresh];
  const dest = destination();
  await waitFor(() => expected.every((id) => dest.events.has(id)), { timeoutMs: 20_000, message: 'every record delivered' });
  await new Promise((r) => setTimeout(r, 300));

  // Once each, and nothing else (the duplicate of the keyed job stays out).
  const written = dest.written.map((r) => r.id);
  expect(written.sort()).toEqual([...expected].sort());
  // Every digit of the old job's integers.
  const big = old.filter((r) => r.properties.big !== undefined);
  expect(big.map((r) => dest.events.get(r.id)!.properties.big)).toEqual(big.map(() => 12345678901234567890n));
  // In order within each partition: the partition's records in the order the relays accepted them.
  const position = new Map(expected.map((id, i) => [id, i]));
  for (const p of Array.from({ length: PARTITIONS }, (_, i) => i)) {
    const ofPartition = dest.written.filter((r) => partitionOf(r, PARTITIONS) === p).map((r) => position.get(r.id)!);
    expect(ofPartition).toEqual([...ofPartition].sort((a, b) => a - b));
  }
  // Routed jobs leave no records behind.
  expect(await api.runtime.redis.keys(queuedRecordsKey(`${queue.toKey('')}*`))).toEqual([]);
  expect(logs.filter((line) => line.includes('routing failed'))).toEqual([]);
});

test('a job of a later format stays queued, the log says why, the records behind it wait for it, and a stopping worker hands it back', async () => {
  const queue = api.runtime.queues[0]!;
  // A relay rolled back while a later one's job waits (one partition, so that every record is behind it).
  await api.runtime.store.update(api.tracker.id, (t) => ({ ...t, partitions: 1 }));
  const later = await queue.add(INGEST_JOB_NAME, { v: 3, trackerId: api.tracker.id, n: 1, shared: { at: '2026-11-29T00:00:00.000Z' } } as never);
  await api.runtime.redis.set(queuedRecordsKey(queue.toKey(later.id!)), '{"kind":"event","id":"x"}');
  const res = await api.http.post('/v3/event').set('Authorization', `Tracker ${api.token}`).send({ _event: 'after' });
  expect(res.status).toBe(202);

  await startWorker();
  await waitFor(() => logs.some((line) => line.includes('in format 3, written by a later Tributary')), { timeoutMs: 10_000, message: 'the refusal logged' });
  const line = JSON.parse(logs.find((l) => l.includes('in format 3'))!) as { msg: string; err: string; jobId: string };
  expect(line).toMatchObject({ msg: 'routing failed; retrying', jobId: later.id });
  expect(line.err).toContain('this one reads formats 1 to 2');
  expect(await queue.getJobState(later.id!)).toBe('active');
  expect(destination().written).toEqual([]);
  // A worker stopping hands the job back, first in line, rather than waiting on it or failing it.
  await worker!.close();
  worker = undefined;
  expect(await queue.getJobState(later.id!)).toBe('waiting');
  expect(await api.runtime.redis.lindex(queue.keys.wait!, -1)).toBe(later.id);
});
