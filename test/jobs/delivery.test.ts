import { randomUUID } from 'node:crypto';
import { PermanentError, RetryableError } from '../../connectors/errors';
import { ConnectorRegistry } from '../../connectors/registry';
import { DeadLetterStore } from '../../jobs/delivery/dead-letters';
import { DestinationStatusStore } from '../../jobs/delivery/destination-status';
import { deliveryKeys } from '../../jobs/delivery/keys';
import { startWorkerRuntime, type WorkerRuntime } from '../../jobs/worker-runtime';
import { createLogger } from '../../src/core/logger';
import { startTestApi, type TestApi } from '../helpers/api';
import { createMemoryConnector, memoryDestination } from '../helpers/memory-connector';
import { TEST_REDIS_URL } from '../helpers/redis';
import { waitFor } from '../helpers/wait';
import { FAST_WORKER } from '../helpers/fast-worker';


let api: TestApi;
let worker: WorkerRuntime;
const names = { a: `a-${randomUUID()}`, b: `b-${randomUUID()}`, small: `small-${randomUUID()}` };

beforeAll(async () => {
  api = await startTestApi({}, {
    destinations: [
      { id: 'a', type: 'memory', enabled: true, settings: { name: names.a } },
      { id: 'b', type: 'memory', enabled: true, settings: { name: names.b } },
      { id: 'small', type: 'memory', enabled: true, settings: { name: names.small, batchRecords: 7 } },
    ],
  });
  worker = await startWorkerRuntime(api.config, TEST_REDIS_URL, new ConnectorRegistry([createMemoryConnector() as never]), createLogger('silent'), FAST_WORKER);
});
afterAll(async () => {
  await worker.close();
  await api.close();
});

const post = (path: string, body: unknown) => api.http.post(path).set('Authorization', `Tracker ${api.token}`).send(body as object);
const keysOf = (destinationId: string) => deliveryKeys(api.prefix, { trackerId: api.tracker.id, destinationId });

test('every event reaches every enabled destination exactly once', async () => {
  const events = Array.from({ length: 120 }, (_, i) => ({ _event: 'fanout', n: i }));
  const res = await post('/v3/event', events);
  expect(res.status).toBe(202);
  const ids: string[] = res.body.results.map((r: { id: string }) => r.id);
  for (const name of [names.a, names.b]) {
    const dest = memoryDestination(name);
    await waitFor(() => ids.every((id) => dest.events.has(id)), { message: `events in ${name}` });
    expect([...dest.events.values()].filter((e) => e.event === 'fanout')).toHaveLength(120);
  }
  // What the connector reports about its destination is kept with the delivery status.
  const status = await waitFor(async () => {
    const s = await new DestinationStatusStore(api.runtime.redis, keysOf('a')).read();
    return Number(s.details?.events ?? 0) >= 120 ? s : undefined;
  });
  expect(status.details).toMatchObject({ users: 0 });
});

test("a destination's own batch limit (batchFor) caps its writes; the others keep the connector's", async () => {
  const res = await post('/v3/event', Array.from({ length: 60 }, (_, i) => ({ _event: 'sized', n: i })));
  expect(res.status).toBe(202);
  const ids: string[] = res.body.results.map((r: { id: string }) => r.id);
  const small = memoryDestination(names.small);
  const a = memoryDestination(names.a);
  await waitFor(() => ids.every((id) => small.events.has(id) && a.events.has(id)), { message: 'events in both destinations' });
  expect(Math.max(...small.sizes)).toBeLessThanOrEqual(7);
  expect(Math.max(...a.sizes)).toBeGreaterThan(7);
});

test('updates to one user are applied in accepted order, null clears', async () => {
  const uid = `u-${randomUUID()}`;
  for (const body of [{ _uid: uid, plan: 'free', seats: 1 }, { _uid: uid, plan: 'pro' }, { _uid: uid, seats: null, country: 'FR' }]) {
    expect((await post('/v3/user', body)).status).toBe(202);
  }
  await waitFor(() => memoryDestination(names.a).users.get(uid)?.country === 'FR', { message: 'third update' });
  expect(memoryDestination(names.a).users.get(uid)).toEqual({ plan: 'pro', country: 'FR' });
});

test('a failing destination is retried and does not hold up the other one', async () => {
  const a = memoryDestination(names.a);
  const b = memoryDestination(names.b);
  let release!: () => void;
  a.gate = new Promise((r) => (release = r));
  a.failNext.push(new RetryableError('backend error', { status: 503 }));
  const res = await post('/v3/event', { _event: 'isolated' });
  const id: string = res.body.id;
  await waitFor(() => b.events.has(id), { message: 'b delivers while a is stuck' });
  expect(a.events.has(id)).toBe(false);
  a.gate = undefined;
  release();
  await waitFor(() => a.events.has(id), { message: 'a delivers after its retry' });
  const status = await new DestinationStatusStore(api.runtime.redis, keysOf('a')).read();
  expect(status.lastError).toMatchObject({ kind: 'retryable', message: 'backend error' });
});

test('a refused record is dead-lettered with its reason, the rest of its batch delivered, and replay delivers it', async () => {
  const a = memoryDestination(names.a);
  const res = await post('/v3/event', [{ _event: 'good' }, { _event: 'poison' }, { _event: 'good' }]);
  const [good1, poison, good2] = res.body.results.map((r: { id: string }) => r.id) as [string, string, string];
  a.recordFaults.set(poison, () => ({ status: 'failed', error: new PermanentError('column type mismatch', { status: 400 }) }));
  const dlq = new DeadLetterStore(api.runtime.redis, keysOf('a'));
  await waitFor(async () => (await dlq.count()) === 1 && a.events.has(good1) && a.events.has(good2), { message: 'dead letter' });
  const [letter] = await dlq.list();
  expect(letter).toMatchObject({ record: { id: poison, event: 'poison' }, error: { kind: 'permanent', message: 'column type mismatch', status: 400 } });

  a.recordFaults.delete(poison);
  let progress = 0;
  expect(await dlq.replay(undefined, (done) => (progress = done))).toBe(1);
  expect(progress).toBe(1);
  await waitFor(() => a.events.has(poison), { message: 'replayed record delivered' });
  expect(await dlq.count()).toBe(0);
});

test('a record that keeps asking for a retry is dead-lettered after maxRecordAttempts', async () => {
  const b = memoryDestination(names.b);
  const res = await post('/v3/event', { _event: 'flaky' });
  const id: string = res.body.id;
  b.recordFaults.set(id, () => ({ status: 'retry', error: new RetryableError('row stopped') }));
  const dlq = new DeadLetterStore(api.runtime.redis, keysOf('b'));
  await waitFor(async () => (await dlq.list()).some((l) => l.record.id === id), { message: 'flaky record dead-lettered' });
  expect(b.attempts.get(id)).toBe(3);
  await dlq.discard();
  expect(await dlq.count()).toBe(0);
});

test('a permanent whole-batch error dead-letters the batch and delivery goes on', async () => {
  const b = memoryDestination(names.b);
  b.failNext.push(new PermanentError('bad request', { status: 400 }));
  const first = await post('/v3/event', { _event: 'lost-batch' });
  const dlq = new DeadLetterStore(api.runtime.redis, keysOf('b'));
  await waitFor(async () => (await dlq.list()).some((l) => l.record.id === first.body.id), { message: 'batch dead-lettered' });
  const second = await post('/v3/event', { _event: 'after' });
  await waitFor(() => b.events.has(second.body.id), { message: 'next batch delivered' });
  const status = await new DestinationStatusStore(api.runtime.redis, keysOf('b')).read();
  expect(status.queued).toBe(0);
  expect(status.deadLettered).toBe(1);
});
