import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { RetryableError } from '../../connectors/errors';
import { ConnectorRegistry } from '../../connectors/registry';
import { DestinationStatusStore } from '../../jobs/delivery/destination-status';
import { deliveryKeys } from '../../jobs/delivery/keys';
import { spoolDirectory } from '../../jobs/spill/spool';
import { startWorkerRuntime, type WorkerRuntime } from '../../jobs/worker-runtime';
import { createLogger } from '../../src/core/logger';
import { startTestApi, type TestApi } from '../helpers/api';
import { createMemoryConnector, memoryDestination } from '../helpers/memory-connector';
import { TEST_REDIS_URL } from '../helpers/redis';
import { waitFor } from '../helpers/wait';
import { FAST_WORKER } from '../helpers/fast-worker';

/**
 * A disabled destination's backlog passes its Redis cap and moves to the disk spool while another
 * destination of the tracker keeps delivering; once enabled, it gets everything exactly once, spool
 * first, in accepted order, and Redis and the disk are empty again.
 */
const CAP = 200;
const dataDir = mkdtempSync(path.join(tmpdir(), 'tributary-spill-'));
const names = { paused: `paused-${randomUUID()}`, live: `live-${randomUUID()}` };
let api: TestApi;
let worker: WorkerRuntime;

beforeAll(async () => {
  api = await startTestApi({ DATA_DIR: dataDir }, {
    destinations: [
      { id: 'paused', type: 'memory', enabled: false, settings: { name: names.paused } },
      { id: 'live', type: 'memory', enabled: true, settings: { name: names.live } },
    ],
  });
  worker = await startWorkerRuntime(api.config, TEST_REDIS_URL, new ConnectorRegistry([createMemoryConnector() as never]), createLogger('silent'), {
    ...FAST_WORKER,
    spill: { capRecords: CAP, frameRecords: 64, checkMs: 50 },
  });
});
afterAll(async () => {
  await worker.close();
  await api.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const post = (p: string, body: unknown) => api.http.post(p).set('Authorization', `Tracker ${api.token}`).send(body as object);
test('past its cap a disabled destination spills to disk; enabled, it gets every record once, in order', async () => {
  const pausedKeys = deliveryKeys(api.prefix, { trackerId: api.tracker.id, destinationId: 'paused' });
  const status = new DestinationStatusStore(api.runtime.redis, pausedKeys);
  const sent: string[] = [];
  for (let batch = 0; batch < 10; batch++) {
    // The first batch's first event also carries integers beyond 2^53: they must come back from the disk with every digit.
    const events = Array.from({ length: 100 }, (_, i) => JSON.stringify({ _event: 'spill', n: batch * 100 + i }));
    if (batch === 0) events[0] = `{"_event":"spill","n":0,"big":603851970716743426,"wide":[-98765432109876543210]}`;
    const res = await api.http.post('/v3/event').set('Authorization', `Tracker ${api.token}`).set('Content-Type', 'application/json').send(`[${events.join(',')}]`);
    expect(res.status).toBe(202);
    sent.push(...res.body.results.map((r: { id: string }) => r.id));
    expect((await post('/v3/user', { _uid: 'u1', plan: `p${batch}` })).status).toBe(202);
  }
  const total = sent.length + 10;

  // The live destination is not held up by its neighbour's backlog.
  await waitFor(() => sent.every((id) => memoryDestination(names.live).events.has(id)), { message: 'live destination delivered' });
  const spilled = await waitFor(async () => {
    const s = await status.read();
    return s.spooled > 0 && s.inRedis <= CAP && s.queued === total ? s : undefined;
  }, { message: 'backlog spilled below the cap' });
  expect(spilled.inRedis).toBeLessThanOrEqual(CAP);
  // The backlog grew: the status says how long until the disk is full at that rate.
  expect(spilled.growthPerSecond).toBeGreaterThan(0);
  expect(spilled.fullInSeconds).toEqual({ redisCap: expect.any(Number), disk: expect.any(Number) });
  expect(readdirSync(spoolDirectory(dataDir, api.tracker.id, 'paused')).length).toBeGreaterThan(0);
  expect(memoryDestination(names.paused).written).toHaveLength(0);

  await api.runtime.store.update(api.tracker.id, (t) => ({ ...t, destinations: t.destinations.map((d) => (d.id === 'paused' ? { ...d, enabled: true } : d)) }));
  const dest = memoryDestination(names.paused);
  await waitFor(() => dest.written.length >= total, { message: 'the backlog delivered', timeoutMs: 20_000 });
  await waitFor(async () => (await status.read()).queued === 0, { message: 'nothing left queued' });

  // Once each, in the order accepted: events as sent, the user's updates p0…p9 in turn.
  expect(dest.written.filter((r) => r.kind === 'event').map((r) => r.id)).toEqual(sent);
  expect(dest.written.filter((r) => r.kind === 'user').map((r) => r.properties.plan)).toEqual(Array.from({ length: 10 }, (_, i) => `p${i}`));
  expect([...dest.attempts.values()].every((n) => n === 1)).toBe(true);
  expect(dest.written.find((r) => r.id === sent[0])!.properties).toEqual({ n: 0, big: 603851970716743426n, wide: [-98765432109876543210n] });
  expect(await api.runtime.redis.xlen(pausedKeys.stream)).toBe(0);
  await waitFor(() => readdirSync(spoolDirectory(dataDir, api.tracker.id, 'paused')).length === 0, { message: 'spool segments deleted' });
});

/** 300 requests to a tracker one at a time (the router writes each record as an entry of its own): events, and every sixth a user update. */
async function sendOneByOne(token: string): Promise<{ events: string[]; plans: string[] }> {
  const send = (p: string, body: unknown) => api.http.post(p).set('Authorization', `Tracker ${token}`).send(body as object);
  const events: string[] = [];
  const plans: string[] = [];
  for (let i = 0; i < 300; i++) {
    const user = i % 6 === 5;
    const res = user ? await send('/v3/user', { _uid: 'q1', plan: `q${i}` }) : await send('/v3/event', { _event: 'quiet', n: i });
    expect(res.status).toBe(202);
    if (user) plans.push(`q${i}`);
    else events.push(res.body.id as string);
  }
  return { events, plans };
}

/** Waits until the destination's 300 records are queued, some on disk, and the rest in a few large blocks (not 100 entries). */
async function spilledAndCompacted(keys: ReturnType<typeof deliveryKeys>, queued: number): Promise<void> {
  const status = new DestinationStatusStore(api.runtime.redis, keys);
  const settled = await waitFor(async () => {
    const s = await status.read();
    const entries = await api.runtime.redis.xlen(keys.stream);
    return s.queued === queued && s.spooled > 0 && entries <= 10 ? { ...s, entries } : undefined;
  }, { message: 'spilled and compacted' });
  expect(settled.inRedis / settled.entries).toBeGreaterThan(10);
}

test('a quiet tracker’s single records to a disabled destination are compacted beside the spill; enabled, it gets every record once, in order', async () => {
  const name = `quiet-${randomUUID()}`;
  const { tracker, token } = await api.addTracker({ destinations: [{ id: 'quiet', type: 'memory', enabled: false, settings: { name } }] });
  const keys = deliveryKeys(api.prefix, { trackerId: tracker.id, destinationId: 'quiet' });
  const sent = await sendOneByOne(token);
  await spilledAndCompacted(keys, 300);

  await api.runtime.store.update(tracker.id, (t) => ({ ...t, destinations: t.destinations.map((d) => ({ ...d, enabled: true })) }));
  const dest = memoryDestination(name);
  await waitFor(() => dest.written.length >= 300, { message: 'the backlog delivered', timeoutMs: 20_000 });
  await waitFor(async () => (await new DestinationStatusStore(api.runtime.redis, keys).read()).queued === 0, { message: 'nothing left queued' });
  expect(dest.written.filter((r) => r.kind === 'event').map((r) => r.id)).toEqual(sent.events);
  expect(dest.written.filter((r) => r.kind === 'user').map((r) => r.properties.plan)).toEqual(sent.plans);
  expect([...dest.attempts.values()].every((n) => n === 1)).toBe(true);
  expect(await api.runtime.redis.xlen(keys.stream)).toBe(0);
});

test('a failing destination’s backlog past the batch its loop holds is compacted; recovered, it gets every record once, in order', async () => {
  const name = `flaky-${randomUUID()}`;
  const dest = memoryDestination(name);
  dest.failNext = Array.from({ length: 100_000 }, () => new RetryableError('destination down', { status: 503 }));
  const { tracker, token } = await api.addTracker({ destinations: [{ id: 'flaky', type: 'memory', enabled: true, settings: { name } }] });
  const keys = deliveryKeys(api.prefix, { trackerId: tracker.id, destinationId: 'flaky' });
  const send = (body: unknown) => api.http.post('/v3/event').set('Authorization', `Tracker ${token}`).send(body as object);
  // The loop takes the first record as a batch and keeps failing to write it.
  const firstId = (await send({ _event: 'first' })).body.id as string;
  await waitFor(() => dest.writes >= 3, { message: 'the loop failing on its first batch' });
  const sent = await sendOneByOne(token);
  await spilledAndCompacted(keys, 301);

  dest.failNext.length = 0;
  await waitFor(() => dest.written.length >= 301, { message: 'the backlog delivered', timeoutMs: 20_000 });
  await waitFor(async () => (await new DestinationStatusStore(api.runtime.redis, keys).read()).queued === 0, { message: 'nothing left queued' });
  expect(dest.written.filter((r) => r.kind === 'event').map((r) => r.id)).toEqual([firstId, ...sent.events]);
  expect(dest.written.filter((r) => r.kind === 'user').map((r) => r.properties.plan)).toEqual(sent.plans);
  expect([...dest.attempts.values()].every((n) => n === 1)).toBe(true);
  expect(await api.runtime.redis.xlen(keys.stream)).toBe(0);
});
