import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { ConnectorRegistry } from '../../connectors/registry';
import { trackerBacklogKey } from '../../jobs/delivery/keys';
import { spoolDirectory } from '../../jobs/spill/spool';
import { startWorkerRuntime, type WorkerRuntime } from '../../jobs/worker-runtime';
import { createLogger } from '../../src/core/logger';
import { startTestApi, type TestApi } from '../helpers/api';
import { createMemoryConnector, memoryDestination } from '../helpers/memory-connector';
import { TEST_REDIS_URL } from '../helpers/redis';
import { waitFor } from '../helpers/wait';
import { FAST_WORKER } from '../helpers/fast-worker';

/**
 * A tracker the relay cannot read (here a destination list that is not one: a hand edit, or an
 * earlier relay reading a later one's tracker) beside trackers it can: the others are delivered,
 * and what runs for the unreadable one is neither stopped nor removed.
 */
let api: TestApi;
let worker: WorkerRuntime | undefined;
const names = { good: `good-${randomUUID()}`, later: `later-${randomUUID()}` };
const BROKEN = JSON.stringify({ id: 'broken', name: 'Broken', destinations: 'not a list' });

beforeAll(async () => {
  api = await startTestApi({}, { destinations: [{ id: 'm', type: 'memory', enabled: true, settings: { name: names.good } }] });
  await api.runtime.redis.set(`${api.prefix}:tracker:broken`, BROKEN);
  await api.runtime.redis.sadd(`${api.prefix}:trackers`, 'broken');
});
afterAll(async () => {
  await worker?.close();
  await api.close();
});

const post = (token: string, body: object) => api.http.post('/v3/event').set('Authorization', `Tracker ${token}`).send(body);

test('a tracker the relay cannot read does not stop the others from being delivered', async () => {
  worker = await startWorkerRuntime(api.config, TEST_REDIS_URL, new ConnectorRegistry([createMemoryConnector() as never]), createLogger('silent'), FAST_WORKER);
  const res = await post(api.token, { _event: 'still-here' });
  expect(res.status).toBe(202);
  await waitFor(() => memoryDestination(names.good).events.has(res.body.id), { message: 'the readable tracker delivered' });
  expect(worker.supervisor.leading()).toContain(`${api.tracker.id}/m`);
});

test('a tracker that can no longer be read keeps its destination running, and its queued records are routed as it was', async () => {
  const { tracker, token } = await api.addTracker({ destinations: [{ id: 'm', type: 'memory', enabled: true, settings: { name: names.later } }] });
  const first = await post(token, { _event: 'before' });
  await waitFor(() => memoryDestination(names.later).events.has(first.body.id), { message: 'delivered while readable' });
  const running = `${tracker.id}/m`;
  expect(worker!.supervisor.leading()).toContain(running);

  // A record accepted while the tracker could be read, routed after it no longer can.
  const queue = api.runtime.queues[0]!;
  await queue.pause();
  const queued = await post(token, { _event: 'queued' });
  expect(queued.status).toBe(202);
  const stored = (await api.runtime.redis.get(`${api.prefix}:tracker:${tracker.id}`))!;
  await api.runtime.redis.set(`${api.prefix}:tracker:${tracker.id}`, JSON.stringify({ ...JSON.parse(stored), tokens: 'broken by hand' }));
  await new Promise((r) => setTimeout(r, 1_100)); // past the router's tracker cache
  await queue.resume();
  await waitFor(() => memoryDestination(names.later).events.has(queued.body.id), { message: 'the queued record routed with the settings last read' });

  // Many discoveries later its run is still there and its spool directory too.
  await new Promise((r) => setTimeout(r, 500));
  expect(worker!.supervisor.leading()).toContain(running);
  expect(existsSync(spoolDirectory(api.config.dataDir, tracker.id, 'm', 0))).toBe(true);
  // Senders are refused with a 503 that does not show the operator's details, and retry.
  await new Promise((r) => setTimeout(r, 1_100)); // past the edge's tracker cache
  const refused = await post(token, { _event: 'refused' });
  expect({ status: refused.status, body: refused.body }).toEqual({
    status: 503,
    body: { error: { code: 'ERR_QUEUE_UNAVAILABLE', message: 'Trackers cannot be read: this tracker’s stored settings are not valid (the relay’s log says why)' } },
  });

  // Mended, it is read again: delivery goes on, once.
  await api.runtime.redis.set(`${api.prefix}:tracker:${tracker.id}`, stored);
  await new Promise((r) => setTimeout(r, 1_100));
  const after = await post(token, { _event: 'after' });
  expect(after.status).toBe(202);
  await waitFor(() => memoryDestination(names.later).events.has(after.body.id), { message: 'delivered once mended' });
  expect([...memoryDestination(names.later).events.values()].map((e) => e.event)).toEqual(['before', 'queued', 'after']);
});

test('a worker that starts while a tracker cannot be read keeps its queued records in its backlog, routes the others, and delivers them in order once it is mended', async () => {
  await worker!.close();
  worker = undefined;
  const name = `mended-${randomUUID()}`;
  const { tracker, token } = await api.addTracker({ destinations: [{ id: 'm', type: 'memory', enabled: true, settings: { name } }] });
  const queued = await post(token, [{ _event: 'first' }, { _event: 'second' }]);
  expect(queued.status).toBe(202);
  const key = `${api.prefix}:tracker:${tracker.id}`;
  const stored = (await api.runtime.redis.get(key))!;
  await api.runtime.redis.set(key, JSON.stringify({ ...JSON.parse(stored), destinations: 'broken by hand' }));
  const other = await post(api.token, { _event: 'behind-it' });
  expect(other.status).toBe(202);

  worker = await startWorkerRuntime(api.config, TEST_REDIS_URL, new ConnectorRegistry([createMemoryConnector() as never]), createLogger('silent'), FAST_WORKER);
  await waitFor(() => memoryDestination(names.good).events.has(other.body.id), { message: 'the job behind the unreadable tracker’s routed' });
  expect(await api.runtime.redis.xlen(trackerBacklogKey(api.config.keyspace.shardPrefix(0), tracker.id))).toBe(2);
  expect(memoryDestination(name).events.size).toBe(0);

  await api.runtime.redis.set(key, stored);
  await waitFor(() => memoryDestination(name).events.size === 2, { message: 'the backlog moved once mended' });
  await new Promise((r) => setTimeout(r, 1_100)); // past the edge's tracker cache
  const third = await post(token, { _event: 'third' });
  expect(third.status).toBe(202);
  await waitFor(() => memoryDestination(name).events.has(third.body.id), { message: 'a record after it' });
  expect([...memoryDestination(name).events.values()].map((e) => e.event)).toEqual(['first', 'second', 'third']);
});
