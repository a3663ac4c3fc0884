import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { ConnectorRegistry } from '../../connectors/registry';
import { spoolDirectory } from '../../jobs/spill/spool';
import { startWorkerRuntime, type WorkerRuntime } from '../../jobs/worker-runtime';
import { createLogger } from '../../src/core/logger';
import { DeliveryAdmin } from '../../src/operator/delivery-admin';
import { DestinationService } from '../../src/operator/destination-service';
import { startTestApi, type TestApi } from '../helpers/api';
import { createMemoryConnector, memoryDestination } from '../helpers/memory-connector';
import { TEST_REDIS_URL } from '../helpers/redis';
import { waitFor } from '../helpers/wait';
import { FAST_WORKER } from '../helpers/fast-worker';

/**
 * Removing a tracker: its tokens stop, its deliveries stop, its records still waiting to be routed
 * are discarded rather than kept for a tracker of that id to come, Redis keeps nothing of it but
 * the removal's mark, and the other trackers go on.
 */
describe.each([1, 2])('with %i shard(s)', (shards) => {
  let api: TestApi;
  let worker: WorkerRuntime;
  let admin: DeliveryAdmin;
  const names = { other: `other-${randomUUID()}`, gone: `gone-${randomUUID()}`, again: `again-${randomUUID()}` };

  beforeAll(async () => {
    api = await startTestApi({ REDIS_SHARDS: String(shards) }, { destinations: [{ id: 'm', type: 'memory', enabled: true, settings: { name: names.other } }] });
    const registry = new ConnectorRegistry([createMemoryConnector() as never]);
    admin = new DeliveryAdmin({ destinations: new DestinationService(api.runtime.store, registry, api.config.dataDir, createLogger('silent')), trackers: api.runtime.store, redis: api.runtime.redis, keyspace: api.config.keyspace, dataDir: api.config.dataDir });
    worker = await startWorkerRuntime(api.config, TEST_REDIS_URL, registry, createLogger('silent'), FAST_WORKER);
  });
  afterAll(async () => {
    await worker.close();
    await api.close();
  });

  const post = (token: string, body: object) => api.http.post('/v3/event').set('Authorization', `Tracker ${token}`).send(body);

  test('a removed tracker leaves nothing in Redis but its mark, and its queued records are discarded, not kept', async () => {
    const { tracker, token } = await api.addTracker({ id: 'leaving', destinations: [{ id: 'm', type: 'memory', enabled: true, settings: { name: names.gone } }] });
    const first = await post(token, { _event: 'delivered', _id: 'client-key-1' });
    await waitFor(() => memoryDestination(names.gone).events.has(first.body.id), { message: 'delivered before removal' });
    expect(worker.supervisor.leading()).toContain('leaving/m');
    expect(existsSync(spoolDirectory(api.config.dataDir, tracker.id, 'm', 0))).toBe(true);

    // Accepted, not yet routed when the tracker goes.
    const queues = api.runtime.queues;
    await Promise.all(queues.map((q) => q.pause()));
    const queued = await post(token, [{ _event: 'queued' }, { _event: 'queued' }]);
    expect(queued.status).toBe(202);
    const removed = await admin.removeTracker(tracker.id, 200);
    expect(removed).toEqual({ removed: 'leaving', destinations: ['m'], discarded: { queued: 0, deadLetters: 0, backlog: 0 } });
    await Promise.all(queues.map((q) => q.resume()));

    expect((await post(token, { _event: 'refused' })).status).toBe(401);
    const after = await post(api.token, { _event: 'others-go-on' });
    await waitFor(() => memoryDestination(names.other).events.has(after.body.id), { message: 'the other tracker delivered' });
    await waitFor(() => !worker.supervisor.leading().includes('leaving/m'), { message: 'its delivery stopped' });
    await waitFor(() => !existsSync(spoolDirectory(api.config.dataDir, tracker.id, 'm', 0)), { message: 'its spool deleted' });
    expect([...memoryDestination(names.gone).events.values()].map((e) => e.event)).toEqual(['delivered']);

    const left = (await api.runtime.redis.keys(`*${api.prefix}*leaving*`)).sort();
    expect(left).toEqual([`${api.config.redisPrefix}:tracker-removed:leaving`]);
    expect(await api.runtime.store.get('leaving')).toBeUndefined();
    expect(await api.runtime.store.removedAt('leaving')).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT/));
  });

  test('a tracker of a removed id can be made again, and gets only its own records, its client keys unseen', async () => {
    const { token } = await api.addTracker({ id: 'leaving', destinations: [{ id: 'm', type: 'memory', enabled: true, settings: { name: names.again } }] });
    const again = await post(token, { _event: 'anew', _id: 'client-key-1' });
    expect(again.status).toBe(202);
    await waitFor(() => memoryDestination(names.again).events.has(again.body.id), { message: 'the new tracker delivered' });
    expect([...memoryDestination(names.again).events.values()].map((e) => e.event)).toEqual(['anew']);
  });

  test('removing a tracker that does not exist is refused, naming it', async () => {
    await expect(admin.removeTracker('never-was', 0)).rejects.toThrow('No tracker with id "never-was".');
    await expect(admin.removeTracker('Not An Id', 0)).rejects.toThrow('No tracker with id "Not An Id".');
  });
});
