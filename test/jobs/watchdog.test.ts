import { randomUUID } from 'node:crypto';
import { ConnectorRegistry } from '../../connectors/registry';
import { DestinationStatusStore } from '../../jobs/delivery/destination-status';
import { deliveryKeys } from '../../jobs/delivery/keys';
import { startWorkerRuntime, type WorkerRuntime } from '../../jobs/worker-runtime';
import { createLogger } from '../../src/core/logger';
import { startTestApi, type TestApi } from '../helpers/api';
import { collectGarbageOften } from '../helpers/gc';
import { createMemoryConnector, memoryDestination } from '../helpers/memory-connector';
import { TEST_REDIS_URL } from '../helpers/redis';
import { waitFor } from '../helpers/wait';
import { FAST_WORKER, FAST_DELIVERY } from '../helpers/fast-worker';

/** The delivery loop's own deadline: a write that never answers is abandoned and retried, never waited on for good. */
const WRITE_TIMEOUT_MS = 300;
const FAST = { ...FAST_WORKER, delivery: { ...FAST_DELIVERY, writeTimeoutMs: WRITE_TIMEOUT_MS } };

let api: TestApi;
let worker: WorkerRuntime;
let stopGc: () => void;
const name = `hang-${randomUUID()}`;

beforeAll(async () => {
  api = await startTestApi({}, { destinations: [{ id: 'm', type: 'memory', enabled: true, settings: { name } }] });
  worker = await startWorkerRuntime(api.config, TEST_REDIS_URL, new ConnectorRegistry([createMemoryConnector() as never]), createLogger('silent'), FAST);
  stopGc = collectGarbageOften(100);
});
afterAll(async () => {
  stopGc();
  await worker.close();
  await api.close();
});

const post = (body: unknown) => api.http.post('/v3/event').set('Authorization', `Tracker ${api.token}`).send(body as object);
const status = () => new DestinationStatusStore(api.runtime.redis, deliveryKeys(api.prefix, { trackerId: api.tracker.id, destinationId: 'm' })).read();

test('a write that never answers is abandoned at the deadline, shown in the status, and retried as a resend', async () => {
  const dest = memoryDestination(name);
  dest.hangNext.push('abortable');
  // The retries wait here (and are abandoned too) until the test has seen the status.
  let release!: () => void;
  dest.gate = new Promise((r) => (release = r));
  const writesBefore = dest.writeOptions.length;
  const id: string = (await post({ _event: 'hung' })).body.id;
  const stalled = await waitFor(async () => {
    const s = await status();
    return s.lastError?.message.includes('abandoned') ? s : undefined;
  }, { message: 'the abandoned write in the status' });
  expect(stalled).toMatchObject({ inFlight: 1, lastError: { kind: 'retryable' } });
  expect(stalled.attempts).toBeGreaterThanOrEqual(1);
  expect(stalled.writingSince).not.toBeNull();
  expect(stalled.retryAt).not.toBeNull();
  dest.gate = undefined;
  release();
  await waitFor(() => dest.events.has(id), { message: 'delivery after the abandoned write' });
  expect([...dest.events.values()].filter((e) => e.event === 'hung')).toHaveLength(1);
  // The first attempt was a fresh write; every retry knows its records may have landed already.
  const options = dest.writeOptions.slice(writesBefore);
  expect(options[0]).toEqual({ resend: false });
  expect(options.length).toBeGreaterThanOrEqual(2);
  expect(options.slice(1).every((o) => o?.resend === true)).toBe(true);
  const after = await waitFor(async () => {
    const s = await status();
    return s.inFlight === 0 && s.queued === 0 ? s : undefined;
  });
  expect(after).toMatchObject({ writingSince: null, attempts: 0, retryAt: null });
});

test('a writer whose hung write ignores the abort is closed and opened afresh; the batch is delivered once', async () => {
  const dest = memoryDestination(name);
  dest.hangNext.push('deaf');
  const openedBefore = dest.opened;
  const id: string = (await post({ _event: 'wedged' })).body.id;
  // ~1 s alone; 7–8 s beside six busy loops on two cores (full collections every 100 ms): a bound on liveness, not on speed.
  await waitFor(() => dest.events.has(id), { timeoutMs: 45_000, message: 'delivery by a new writer' });
  expect(dest.opened).toBe(openedBefore + 1);
  expect([...dest.events.values()].filter((e) => e.event === 'wedged')).toHaveLength(1);
  // The new writer is told the batch may have been written by the one before it.
  expect(dest.writeOptions[dest.writeOptions.length - 1]).toEqual({ resend: true });
}, 60_000);

test('records after the ones sent before are fresh writes again', async () => {
  const dest = memoryDestination(name);
  const id: string = (await post({ _event: 'calm' })).body.id;
  await waitFor(() => dest.events.has(id));
  expect(dest.writeOptions[dest.writeOptions.length - 1]).toEqual({ resend: false });
});
