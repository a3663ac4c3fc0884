import { ApiError } from '../../src/core/errors';
import type { NewIngestJob } from '../../jobs/routing/ingest-job';
import type { JobAdder } from '../../src/ingest/job-add';
import { IngestWriter } from '../../src/ingest/ingest-writer';
import { Keyspace } from '../../src/core/redis/keyspace';
import type { TrackedRecord } from '../../src/core/records/types';
import { waitFor } from '../helpers/wait';

/** A queue whose writes hang until released, to see the writer's timeout from both sides. */
function hangingQueue() {
  const writes: Array<{ ids: string[]; release: () => void }> = [];
  const queue: JobAdder = {
    add: (job: NewIngestJob) => new Promise<number[]>((resolve) => writes.push({ ids: job.lines.split('\n').map((line) => (JSON.parse(line) as { id: string }).id), release: () => resolve([]) })),
  };
  return { queue, writes };
}

const T = { trackerId: 't', partitions: 1 };
const record = (n: number): TrackedRecord => ({ kind: 'event', id: `id-${n}`, receivedAt: '2026-01-01T00:00:00.000Z', event: 'e', properties: {} });
const options = { timeoutMs: 80, maxBatchRecords: 1000, maxInflight: 1, retryAfterSeconds: 1, keyspace: new Keyspace('unused', 1), isConnected: () => true };

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

test('a write Redis does not confirm in time is a 503, and one still waiting its turn is withdrawn, not sent later', async () => {
  const { queue, writes } = hangingQueue();
  const writer = new IngestWriter([queue], options);
  const sent = writer.write(T, [record(1)]);
  await new Promise((r) => setImmediate(r));
  // The first write is in flight (maxInflight 1): this one waits for its turn.
  const waiting = writer.write(T, [record(2)]);
  const started = performance.now();
  const [first, second] = await Promise.all([refusal(sent), refusal(waiting)]);
  expect(performance.now() - started).toBeGreaterThanOrEqual(60);
  expect(first.code).toBe('ERR_QUEUE_UNAVAILABLE');
  expect(second.code).toBe('ERR_QUEUE_UNAVAILABLE');
  expect(first.headers['Retry-After']).toBe('1');

  // Redis answers the first write late: the withdrawn record is never written after its 503.
  writes[0]!.release();
  await new Promise((r) => setTimeout(r, 20));
  expect(writes.map((w) => w.ids)).toEqual([['id-1']]);
});

test('writes confirmed in time resolve, and later writes get their own full timeout', async () => {
  const { queue, writes } = hangingQueue();
  // Margins of a second each way: under the full suite on 2 cores the event loop has stalled for
  // more than 200 ms, which margins of 150 ms did not survive.
  const timeoutMs = 2000;
  const writer = new IngestWriter([queue], { ...options, timeoutMs, maxInflight: 2 });
  const started = performance.now();
  const a = writer.write(T, [record(1)]);
  await new Promise((r) => setTimeout(r, 1000));
  const b = writer.write(T, [record(2)]);
  await new Promise((r) => setImmediate(r));
  writes[0]!.release();
  await a;
  // Past a's deadline, well before b's (written 1 s later): a's deadline passing must not cut b's short.
  await new Promise((r) => setTimeout(r, Math.max(0, started + timeoutMs + 20 - performance.now())));
  writes[1]!.release();
  await expect(b).resolves.toBeUndefined();
  await writer.close();
});

test('with a linger, requests arriving within it share one write; a full batch goes at once', async () => {
  const { queue, writes } = hangingQueue();
  // A linger far longer than the waits below, so that a loaded machine's late timers cannot end it early.
  const writer = new IngestWriter([queue], { ...options, timeoutMs: 5000, lingerMs: 400, maxBatchRecords: 3 });
  const a = writer.write(T, [record(1)]);
  await new Promise((r) => setTimeout(r, 10));
  const b = writer.write(T, [record(2)]);
  await new Promise((r) => setTimeout(r, 10));
  // Inside the linger: nothing sent yet.
  expect(writes).toHaveLength(0);
  await waitFor(() => writes.length > 0, { message: 'the lingering write' });
  expect(writes.map((w) => w.ids)).toEqual([['id-1', 'id-2']]);
  writes[0]!.release();
  await Promise.all([a, b]);

  // A write that fills maxBatchRecords (3) while another lingers: both go on the next turn.
  const c = writer.write(T, [record(3)]);
  await new Promise((r) => setTimeout(r, 5));
  expect(writes).toHaveLength(1);
  const d = writer.write(T, [record(4), record(5)]);
  await new Promise((r) => setImmediate(r));
  expect(writes.map((w) => w.ids)).toEqual([['id-1', 'id-2'], ['id-3', 'id-4', 'id-5']]);
  writes[1]!.release();
  await Promise.all([c, d]);
  await writer.close();
});

test('requests that lingered while every write was under way go as soon as one is free', async () => {
  const { queue, writes } = hangingQueue();
  const lingerMs = 400;
  const writer = new IngestWriter([queue], { ...options, timeoutMs: 5000, lingerMs, maxInflight: 1 });
  const a = writer.write(T, [record(1)]);
  await waitFor(() => writes.length === 1, { message: 'the first write' });
  // The one write allowed is under way: b waits for it longer than its linger.
  const b = writer.write(T, [record(2)]);
  await new Promise((r) => setTimeout(r, lingerMs + 100));
  expect(writes).toHaveLength(1);
  const released = performance.now();
  writes[0]!.release();
  await a;
  await waitFor(() => writes.length === 2, { message: 'the write of the request that waited' });
  // Lingering again after the free write would take another 400 ms; margins for a loaded machine's late timers.
  expect(performance.now() - released).toBeLessThan(lingerMs - 100);
  expect(writes[1]!.ids).toEqual(['id-2']);
  writes[1]!.release();
  await b;
  await writer.close();
});
