import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PermanentError, RetryableError } from '../../connectors/errors';
import { ConnectorRegistry } from '../../connectors/registry';
import { DeadLetterStore } from '../../jobs/delivery/dead-letters';
import { newIngestJob, queuedExact, queuedLines, queuedTexts, type QueuedJobData } from '../../jobs/routing/ingest-job';
import { ingestJobDataV1 } from '../helpers/ingest-job-v1';
import { deliveryKeys } from '../../jobs/delivery/keys';
import { Spool } from '../../jobs/spill/spool';
import { entryFields, entryRecords, lineTexts } from '../../jobs/routing/stream-entries';
import { startWorkerRuntime, type WorkerRuntime } from '../../jobs/worker-runtime';
import { parseExactJson } from '../../src/core/records/exact-json';
import { createLogger } from '../../src/core/logger';
import type { TrackedRecord } from '../../src/core/records/types';
import { startTestApi, type TestApi } from '../helpers/api';
import { createMemoryConnector, memoryDestination } from '../helpers/memory-connector';
import { TEST_REDIS_URL } from '../helpers/redis';
import { waitFor } from '../helpers/wait';
import { FAST_WORKER } from '../helpers/fast-worker';

const PROPS = { id: 603851970716743426n, wide: -98765432109876543210n, list: [1, 12345678901234567890n], deep: { n: -603851970716743426n }, small: 3 };

describe('the ingest job', () => {
  const record = (properties: TrackedRecord['properties']): TrackedRecord => ({ kind: 'event', id: randomUUID(), receivedAt: '2026-11-25T00:00:00.000Z', event: 'e', properties });

  /** What the router reads of a job: its data through JSON (as BullMQ keeps it) and its records' lines. */
  const asQueued = (job: { data: object; lines: string | null }) => ({ data: JSON.parse(JSON.stringify(job.data)) as QueuedJobData, lines: job.lines });

  it('carries every digit in its records\' lines and says so in its data', () => {
    const records = [record({ plain: 1 }), record({ ...PROPS })];
    const { data, lines } = asQueued(newIngestJob('trk', records, true));
    expect(data).toEqual({ v: 2, trackerId: 'trk', n: 2, at: '2026-11-25T00:00:00.000Z', x: 1 });
    expect(queuedExact(data)).toBe(true);
    expect(queuedTexts('1', data, lines).map((t) => parseExactJson(t))).toEqual(records);
    expect(lineTexts(queuedLines('1', data, Buffer.from(lines!), new Set([0]))).map((t) => parseExactJson(t))).toEqual([records[1]]);
  });

  it('is the plain shape when no record holds such an integer', () => {
    const records = [record({ n: 1 })];
    expect(newIngestJob('trk', records, true).data).toEqual({ v: 2, trackerId: 'trk', n: 1, at: '2026-11-25T00:00:00.000Z' });
    expect(newIngestJob('trk', records, false, 'tok').data).toEqual({ v: 2, trackerId: 'trk', n: 1, at: '2026-11-25T00:00:00.000Z', dedup: 'tok' });
  });

  it('of format 1 (written before format 2) is read with every digit too', () => {
    const records = [record({ plain: 1 }), record({ ...PROPS })];
    const { data } = asQueued({ data: ingestJobDataV1('trk', records, true), lines: null });
    expect(queuedExact(data)).toBe(true);
    expect(queuedTexts('1', data, null).map((t) => parseExactJson(t))).toEqual(records);
  });
});

describe('a compressed block and the disk spool', () => {
  const record = (properties: TrackedRecord['properties']): TrackedRecord => ({ kind: 'event', id: randomUUID(), receivedAt: '2026-11-25T00:00:00.000Z', event: 'e', properties });
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'tributary-exact-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('give back every digit: job → block (as the router writes it) → spool frame → record', async () => {
    const records = [record({ plain: 1 }), record({ ...PROPS }), record({ text: 'tab\tand 603851970716743426' })];
    const job = newIngestJob('trk', records, true);
    const block = entryRecords('1700-5', entryFields(queuedTexts('1', job.data, job.lines)));
    expect(block.map((r) => parseExactJson(r.json))).toEqual(records);

    // The spiller moves a block's records to the disk as their texts, unchanged.
    const spool = await Spool.open(dir, null, '0-0');
    await spool.append(block.map(({ id, json }) => ({ id, json })));
    const back = await spool.readAfter('0-0', 10);
    await spool.close();
    expect(back.map((e) => e.id)).toEqual(['1700-5#0', '1700-5#1', '1700-5#2']);
    expect(back.map((e) => parseExactJson(e.json))).toEqual(records);
    expect(back[1]!.json).toContain('"wide":-98765432109876543210');
  });
});

describe('delivery: retries, dead letters and replay', () => {
  const name = `exact-${randomUUID()}`;
  let api: TestApi;
  let worker: WorkerRuntime;

  beforeAll(async () => {
    api = await startTestApi({}, { destinations: [{ id: 'm', type: 'memory', enabled: true, settings: { name } }] });
    worker = await startWorkerRuntime(api.config, TEST_REDIS_URL, new ConnectorRegistry([createMemoryConnector() as never]), createLogger('silent'), FAST_WORKER);
  });
  afterAll(async () => {
    await worker.close();
    await api.close();
  });

  it('hands the connector the same digits on every attempt, in the dead letter, and after replay', async () => {
    const dest = memoryDestination(name);
    const res = await api.http
      .post('/v3/event')
      .set('Authorization', `Tracker ${api.token}`)
      .set('Content-Type', 'application/json')
      .send('{"_event":"big","_uid":-12345678901234567890,"id":603851970716743426,"wide":-98765432109876543210,"list":[1,12345678901234567890],"deep":{"n":-603851970716743426},"small":3}');
    expect(res.status).toBe(202);
    const id: string = res.body.id;
    const seen: unknown[] = [];
    dest.recordFaults.set(id, (attempt) => {
      seen.push(attempt);
      return attempt < 3 ? { status: 'retry', error: new RetryableError('later') } : { status: 'failed', error: new PermanentError('refused', { status: 400 }) };
    });
    const dlq = new DeadLetterStore(api.runtime.redis, deliveryKeys(api.prefix, { trackerId: api.tracker.id, destinationId: 'm' }));
    const [letter] = await waitFor(async () => {
      const list = await dlq.list();
      return list.length === 1 ? list : undefined;
    }, { message: 'dead letter', timeoutMs: 15_000 });
    expect(seen).toHaveLength(3);
    expect(letter!.record).toMatchObject({ id, uid: '-12345678901234567890', properties: PROPS });

    dest.recordFaults.delete(id);
    expect(await dlq.replay()).toBe(1);
    const delivered = await waitFor(() => dest.events.get(id), { message: 'replayed record delivered', timeoutMs: 15_000 });
    expect(delivered.properties).toEqual(PROPS);
    expect(delivered.uid).toBe('-12345678901234567890');
  });
});
