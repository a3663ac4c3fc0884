import { randomUUID } from 'node:crypto';
import { ConnectorRegistry } from '../../connectors/registry';
import { DestinationStatusStore } from '../../jobs/delivery/destination-status';
import { backlogIndexKey, deliveryKeys, trackerBacklogKey } from '../../jobs/delivery/keys';
import { startWorkerRuntime, type WorkerRuntime } from '../../jobs/worker-runtime';
import { createLogger } from '../../src/core/logger';
import type { Tracker } from '../../src/core/trackers/types';
import { startTestApi, type TestApi } from '../helpers/api';
import { createMemoryConnector, memoryDestination } from '../helpers/memory-connector';
import { TEST_REDIS_URL } from '../helpers/redis';
import { waitFor } from '../helpers/wait';
import { FAST_WORKER } from '../helpers/fast-worker';


let api: TestApi;
let worker: WorkerRuntime;

beforeAll(async () => {
  api = await startTestApi();
  worker = await startWorkerRuntime(api.config, TEST_REDIS_URL, new ConnectorRegistry([createMemoryConnector() as never]), createLogger('silent'), FAST_WORKER);
});
afterAll(async () => {
  await worker.close();
  await api.close();
});

const post = (token: string, body: unknown) => api.http.post('/v3/event').set('Authorization', `Tracker ${token}`).send(body as object);
const backlogLength = (trackerId: string) => api.runtime.redis.xlen(trackerBacklogKey(api.prefix, trackerId));
const addDestination = (tracker: Tracker, id: string, name: string, enabled = true) =>
  api.runtime.store.update(tracker.id, (t) => ({ ...t, destinations: [...t.destinations, { id, type: 'memory', enabled, settings: { name } }] }));

test('records of a tracker without destination wait in its backlog, then reach the first destination added, in order', async () => {
  const { tracker, token } = await api.addTracker({ id: `bare-${randomUUID()}` });
  // More than one Redis call's worth (500 a call), so the move is chunked.
  const events = Array.from({ length: 1200 }, (_, n) => ({ _event: 'early', n }));
  const ids: string[] = [];
  for (let i = 0; i < events.length; i += 400) {
    const res = await post(token, events.slice(i, i + 400));
    expect(res.status).toBe(202);
    ids.push(...res.body.results.map((r: { id: string }) => r.id));
  }
  await waitFor(async () => (await backlogLength(tracker.id)) === 1200, { message: 'all 1200 records in the backlog' });
  expect(await api.runtime.redis.sismember(backlogIndexKey(api.prefix), tracker.id)).toBe(1);

  // No record follows the new destination: the router's own check moves the backlog.
  const name = `first-${randomUUID()}`;
  await addDestination(tracker, 'first', name);
  const dest = memoryDestination(name);
  await waitFor(() => dest.events.size === 1200, { timeoutMs: 15_000, message: 'backlog delivered' });
  expect([...dest.events.keys()]).toEqual(ids);
  expect(await backlogLength(tracker.id)).toBe(0);
  expect(await api.runtime.redis.exists(trackerBacklogKey(api.prefix, tracker.id))).toBe(0);
  expect(await api.runtime.redis.sismember(backlogIndexKey(api.prefix), tracker.id)).toBe(0);

  // Afterwards records go straight to the destination, after the backlog.
  const later = await post(token, { _event: 'later' });
  await waitFor(() => dest.events.has(later.body.id), { message: 'later event delivered' });
  expect([...dest.events.keys()].at(-1)).toBe(later.body.id);
});

test('a record arriving with the first destination goes after the backlog', async () => {
  const { tracker, token } = await api.addTracker({ id: `race-${randomUUID()}` });
  const early = await post(token, [{ _event: 'a' }, { _event: 'b' }]);
  await waitFor(async () => (await backlogLength(tracker.id)) === 2, { message: 'two records in the backlog' });
  const name = `race-${randomUUID()}`;
  await addDestination(tracker, 'd', name);
  const next = await post(token, { _event: 'c' });
  const dest = memoryDestination(name);
  await waitFor(() => dest.events.size === 3, { message: 'three events delivered' });
  expect([...dest.events.keys()]).toEqual([...early.body.results.map((r: { id: string }) => r.id), next.body.id]);
});

test('a disabled destination keeps its records queued and delivers them once enabled', async () => {
  const name = `paused-${randomUUID()}`;
  const { tracker, token } = await api.addTracker({ id: `paused-${randomUUID()}`, destinations: [{ id: 'p', type: 'memory', enabled: false, settings: { name } }] });
  const res = await post(token, Array.from({ length: 5 }, (_, n) => ({ _event: 'while-paused', n })));
  expect(res.status).toBe(202);
  const status = new DestinationStatusStore(api.runtime.redis, deliveryKeys(api.prefix, { trackerId: tracker.id, destinationId: 'p' }));
  await waitFor(async () => (await status.read()).queued === 5, { message: 'five records queued for the disabled destination' });
  expect(memoryDestination(name).events.size).toBe(0);
  expect(await backlogLength(tracker.id)).toBe(0);

  await api.runtime.store.update(tracker.id, (t) => ({ ...t, destinations: t.destinations.map((d) => ({ ...d, enabled: true })) }));
  await waitFor(() => memoryDestination(name).events.size === 5, { timeoutMs: 10_000, message: 'delivered after enabling' });
});
