import { randomUUID } from 'node:crypto';
import { ConnectorRegistry } from '../../connectors/registry';
import { startWorkerRuntime, type WorkerRuntime } from '../../jobs/worker-runtime';
import { createLogger } from '../../src/core/logger';
import { startTestApi, type TestApi } from '../helpers/api';
import { createMemoryConnector, memoryDestination } from '../helpers/memory-connector';
import { TEST_REDIS_URL } from '../helpers/redis';
import { startTcpProxy } from '../helpers/tcp-proxy';
import { waitFor } from '../helpers/wait';
import { FAST_WORKER } from '../helpers/fast-worker';

/** Client keys at the door: `_id` and `Idempotency-Key`, remembered per tracker, level and key. */
const name = `idem-${randomUUID()}`;
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

const post = (path: string, body: unknown, headers: Record<string, string> = {}, token = api.token) => api.http.post(path).set('Authorization', `Tracker ${token}`).set(headers).send(body as object);
const dest = () => memoryDestination(name);
const key = (label: string) => `${label}-${randomUUID()}`;

test('a record sent three times with its own _id is stored once; the retries succeed and say so', async () => {
  const id = key('order');
  const first = await post('/v3/event', { _id: id, _event: 'purchase', total: 12 });
  expect(first.status).toBe(202);
  expect(first.body).toEqual({ accepted: 1, id });
  for (let i = 0; i < 2; i++) {
    const again = await post('/v3/event', { _id: id, _event: 'purchase', total: 12 });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ accepted: 0, duplicate: true, id });
  }
  const marker = key('after');
  await post('/v3/event', { _id: marker, _event: 'after' });
  await waitFor(() => dest().events.has(marker), { message: 'the record sent after the retries' });
  expect([...dest().events.values()].filter((e) => e.id === id)).toHaveLength(1);
  expect(dest().writeOptions.length).toBeGreaterThan(0);
  const metrics = await api.http.get('/metrics');
  expect(metrics.text).toMatch(new RegExp(`tributary_records_duplicate_total\\{tracker="${api.tracker.id}",kind="event"\\} 2`));
});

test('Idempotency-Key: the key of a single record, <key>:<i> in an array, a record’s own _id wins', async () => {
  const single = key('hdr');
  expect((await post('/v3/event', { _event: 'a' }, { 'Idempotency-Key': single })).body).toEqual({ accepted: 1, id: single });
  expect((await post('/v3/event', { _event: 'a' }, { 'Idempotency-Key': single })).body).toEqual({ accepted: 0, duplicate: true, id: single });

  const batch = key('batch');
  const own = key('own');
  const res = await post('/v3/event', [{ _event: 'b' }, { _event: 'b', _id: own }, { _event: 'b' }], { 'Idempotency-Key': batch });
  expect(res.status).toBe(202);
  expect(res.body.results).toEqual([{ id: `${batch}:0` }, { id: own }, { id: `${batch}:2` }]);
  // The whole array again, plus one new record: only the new one is queued.
  const again = await post('/v3/event', [{ _event: 'b' }, { _event: 'b', _id: own }, { _event: 'b' }, { _event: 'b' }], { 'Idempotency-Key': batch });
  expect(again.status).toBe(202);
  expect(again.body).toEqual({ accepted: 1, duplicates: 3, rejected: 0, results: [{ id: `${batch}:0`, duplicate: true }, { id: own, duplicate: true }, { id: `${batch}:2`, duplicate: true }, { id: `${batch}:3` }] });
  await waitFor(() => dest().events.has(`${batch}:3`));
  expect([...dest().events.keys()].filter((k) => k.startsWith(batch))).toEqual([`${batch}:0`, `${batch}:2`, `${batch}:3`]);
});

test('the same key twice in one array: the second is the duplicate', async () => {
  const id = key('twice');
  const res = await post('/v3/event', [{ _id: id, _event: 'x' }, { _id: id, _event: 'x' }]);
  expect(res.body).toMatchObject({ accepted: 1, duplicates: 1, results: [{ id }, { id, duplicate: true }] });
});

test('keys are per level: an event and a user may share one', async () => {
  const id = key('shared');
  expect((await post('/v3/event', { _id: id, _event: 'x' })).status).toBe(202);
  expect((await post('/v3/user', { _id: id, _uid: `u-${id}` })).status).toBe(202);
});

test('an update retried after a newer one is not applied again, so it cannot revert it', async () => {
  const uid = key('u');
  const older = key('upd');
  expect((await post('/v3/user', { _id: older, _uid: uid, plan: 'free' })).status).toBe(202);
  expect((await post('/v3/user', { _id: key('upd'), _uid: uid, plan: 'pro' })).status).toBe(202);
  expect((await post('/v3/user', { _id: older, _uid: uid, plan: 'free' })).body).toEqual({ accepted: 0, duplicate: true, id: older });
  const marker = key('after');
  await post('/v3/user', { _id: marker, _uid: `${uid}-other`, n: 1 });
  await waitFor(() => dest().users.has(`${uid}-other`));
  expect(dest().users.get(uid)).toEqual({ plan: 'pro' });
});

test('an invalid _id or Idempotency-Key is a 400 naming it', async () => {
  for (const bad of ['with space', 'x'.repeat(129), '', 'é', 42]) {
    const res = await post('/v3/event', { _id: bad, _event: 'x' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'ERR_INVALID_FIELD', field: '_id' });
  }
  const header = await post('/v3/event', { _event: 'x' }, { 'Idempotency-Key': 'two words' });
  expect(header.status).toBe(400);
  expect(header.body.error).toMatchObject({ code: 'ERR_INVALID_FIELD', field: 'Idempotency-Key' });
  // In an array the key needs room for ":<index>".
  const long = await post('/v3/event', [{ _event: 'x' }, { _event: 'y' }], { 'Idempotency-Key': 'k'.repeat(127) });
  expect(long.status).toBe(400);
  expect(long.body.error.message).toContain(':<index>');
});

test('keys in GET parameters and the pixel work too', async () => {
  const id = key('px');
  const url = `/v3/event/tracker.gif?_token=${api.token}&_event=view&_id=${id}`;
  expect((await api.http.get(url)).status).toBe(200);
  expect((await api.http.get(url)).status).toBe(200);
  const marker = key('after');
  await post('/v3/event', { _id: marker, _event: 'after' });
  await waitFor(() => dest().events.has(marker));
  expect([...dest().events.values()].filter((e) => e.id === id)).toHaveLength(1);
});

test('window 0 turns deduplication off: the key is still the stored _id', async () => {
  const { token } = await api.addTracker({ dedupWindowHours: 0 });
  const id = key('off');
  expect((await post('/v3/event', { _id: id, _event: 'x' }, {}, token)).body).toEqual({ accepted: 1, id });
  expect((await post('/v3/event', { _id: id, _event: 'x' }, {}, token)).body).toEqual({ accepted: 1, id });
});

test('a request answered 503 leaves no marker: its retry is accepted', async () => {
  const proxy = await startTcpProxy('127.0.0.1', 6379);
  const down = await startTestApi({ RETRY_AFTER_SECONDS: '1' }, {}, `redis://127.0.0.1:${proxy.port}`);
  try {
    const send = (id: string) => down.http.post('/v3/event').set('Authorization', `Tracker ${down.token}`).send({ _id: id, _event: 'x' });
    expect((await send(key('warm'))).status).toBe(202);
    await proxy.stop();
    await waitFor(() => down.runtime.redis.status !== 'ready');
    const id = key('refused');
    expect((await send(id)).status).toBe(503);
    await proxy.start();
    const retried = await waitFor(async () => {
      const res = await send(id);
      return res.status === 503 ? undefined : res;
    });
    expect(retried.status).toBe(202);
    expect(retried.body).toEqual({ accepted: 1, id });
  } finally {
    await proxy.start();
    await down.close();
    await proxy.close();
  }
});
