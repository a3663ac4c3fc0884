import { randomUUID } from 'node:crypto';
import { ConnectorRegistry } from '../../connectors/registry';
import type { Connector } from '../../connectors/types';
import { startWorkerRuntime, type WorkerRuntime } from '../../jobs/worker-runtime';
import { createLogger } from '../../src/core/logger';
import { DeliveryAdmin } from '../../src/operator/delivery-admin';
import { DestinationService, DestinationServiceError } from '../../src/operator/destination-service';
import { TrackerService, TrackerServiceError } from '../../src/operator/tracker-service';
import { startTestApi, type TestApi } from '../helpers/api';
import { createMemoryConnector, memoryDestination } from '../helpers/memory-connector';
import { TEST_REDIS_URL } from '../helpers/redis';
import { waitFor } from '../helpers/wait';
import { FAST_WORKER } from '../helpers/fast-worker';

/** A tracker of 3 partitions over 3 shards, in process: fan-out, order, deduplication and what an operator sees. */
const singleWriter = { ...createMemoryConnector(), type: 'memory-single', singleWriter: true } as Connector<{ name: string }>;
const registry = new ConnectorRegistry([createMemoryConnector() as never, singleWriter as never]);

let api: TestApi;
let worker: WorkerRuntime;
let admin: DeliveryAdmin;
let destinations: DestinationService;
const names = { a: `a-${randomUUID()}`, single: `s-${randomUUID()}` };

beforeAll(async () => {
  api = await startTestApi({ REDIS_SHARDS: '3' }, {
    partitions: 3,
    destinations: [
      { id: 'a', type: 'memory', enabled: true, settings: { name: names.a } },
      { id: 'single', type: 'memory-single', enabled: true, settings: { name: names.single } },
    ],
  });
  worker = await startWorkerRuntime(api.config, TEST_REDIS_URL, registry, createLogger('silent'), FAST_WORKER);
  destinations = new DestinationService(api.runtime.store, registry, '/nonexistent', createLogger('silent'));
  admin = new DeliveryAdmin({ destinations, trackers: api.runtime.store, redis: api.runtime.redis, keyspace: api.config.keyspace, dataDir: '/nonexistent' });
});
afterAll(async () => {
  await worker.close();
  await api.close();
});

const post = (path: string, body: unknown, headers: Record<string, string> = {}) => api.http.post(path).set('Authorization', `Tracker ${api.token}`).set(headers).send(body as object);

test('each partition is delivered on its own lease; every record once; each user in accepted order', async () => {
  const users = Array.from({ length: 12 }, (_, u) => `u-${u}-${randomUUID()}`);
  for (let step = 0; step < 5; step++) {
    // One request carries every user's update: it is split into one job per partition.
    const res = await post('/v3/user', users.map((uid) => ({ _uid: uid, step })));
    expect(res.status).toBe(202);
  }
  const events = Array.from({ length: 300 }, (_, i) => ({ _event: 'spread', _uid: users[i % users.length], n: i }));
  expect((await post('/v3/event', events)).status).toBe(202);

  const dest = memoryDestination(names.a);
  await waitFor(() => [...dest.events.values()].filter((e) => e.event === 'spread').length === 300, { message: '300 events' });
  await waitFor(() => users.every((uid) => dest.users.get(uid)?.step === 4), { message: 'last updates' });
  // Updates of one user never went backwards: each write saw steps in order.
  for (const uid of users) {
    const steps = dest.written.filter((r) => r.kind === 'user' && r.uid === uid).map((r) => r.properties.step as number);
    expect(steps).toEqual([...steps].sort((x, y) => x - y));
  }
  expect(worker.supervisor.leading().filter((id) => id.startsWith(`${api.tracker.id}/a`)).sort()).toEqual([`${api.tracker.id}/a`, `${api.tracker.id}/a/1`, `${api.tracker.id}/a/2`]);

  // The operator sees one destination, its partitions added up.
  const view = await waitFor(async () => {
    const list = await admin.listWithStatus(api.tracker.id);
    const a = list.find((d) => d.id === 'a')!;
    return a.status.delivered === 360 && a.status.queued === 0 ? list : undefined;
  }, { message: 'status over partitions' });
  // A destination that takes one writer at a time waits, paused with the reason, its records kept.
  const single = view.find((d) => d.id === 'single')!;
  expect(single.status.paused).toMatch(/one writer at a time.*3 partitions/);
  expect(single.status.queued).toBe(360);
  expect(memoryDestination(names.single).writes).toBe(0);
});

test('a client key is deduplicated within its partition', async () => {
  const uid = `k-${randomUUID()}`;
  const first = await post('/v3/event', { _event: 'keyed', _uid: uid }, { 'Idempotency-Key': `key-${uid}` });
  const again = await post('/v3/event', { _event: 'keyed', _uid: uid }, { 'Idempotency-Key': `key-${uid}` });
  expect(first.status).toBe(202);
  expect(again.status).toBe(200);
  expect(again.body.duplicate).toBe(true);
  await waitFor(() => memoryDestination(names.a).events.has(`key-${uid}`), { message: 'keyed event' });
  await new Promise((r) => setTimeout(r, 300));
  expect(memoryDestination(names.a).written.filter((r) => r.id === `key-${uid}`)).toHaveLength(1);
});

test('partitions grow but never shrink; a one-writer destination is refused for a partitioned tracker', async () => {
  const service = new TrackerService(api.runtime.store);
  const err = await service.updateTracker(api.tracker.id, { partitions: 2 }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(TrackerServiceError);
  expect((err as TrackerServiceError).field).toBe('partitions');
  expect((err as Error).message).toMatch(/can grow but not shrink/);
  expect((await service.updateTracker(api.tracker.id, { partitions: 4 })).partitions).toBe(4);

  const refused = await destinations.add(api.tracker.id, { type: 'memory-single', settings: { name: 'x' } }).catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(DestinationServiceError);
  expect((refused as Error).message).toMatch(/one writer at a time.*4 partitions/);
});
