import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { ConfigurationError, PermanentError, RetryableError } from '../../connectors/errors';
import { ConnectorRegistry } from '../../connectors/registry';
import { combinePictures, DestinationSeries, MAX_MARKERS, seriesKey, type DeliveryMarker, type DestinationPicture } from '../../jobs/delivery/destination-series';
import { deliveryKeys } from '../../jobs/delivery/keys';
import { startWorkerRuntime, type WorkerRuntime } from '../../jobs/worker-runtime';
import { createLogger } from '../../src/core/logger';
import { bucketExpiresAt, bucketOf, HOUR_MS, MINUTE_MS, WINDOW_MINUTES } from '../../src/core/series/minutes';
import type { Tracker } from '../../src/core/trackers/types';
import { adminClient, startAdminApi, type AdminTestApi } from '../helpers/admin-api';
import { createMemoryConnector, memoryDestination } from '../helpers/memory-connector';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis';
import { waitFor } from '../helpers/wait';
import { FAST_WORKER } from '../helpers/fast-worker';

const FAST = { ...FAST_WORKER, sampleMs: 200 };

const sum = (xs: Array<number | null>) => xs.reduce<number>((a, b) => a + (b ?? 0), 0);
const moments = (markers: DeliveryMarker[]) => markers.map((m) => `${m.from || '(none)'} → ${m.state}${m.message ? `: ${m.message}` : ''}`).reverse();

describe('a destination’s pictures over time, written by a worker', () => {
  let api: AdminTestApi;
  let worker: WorkerRuntime;
  const name = `series-${randomUUID()}`;
  let trackerId = '';
  let token = '';
  let stopped = false;

  beforeAll(async () => {
    api = await startAdminApi();
    ({ tracker: { id: trackerId }, token } = await api.addTracker({ id: 'series', destinations: [{ id: 'mem', type: 'memory', enabled: true, settings: { name } }] }));
    worker = await startWorkerRuntime(api.config, TEST_REDIS_URL, new ConnectorRegistry([createMemoryConnector() as never]), createLogger('silent'), FAST);
  });
  afterAll(async () => {
    if (!stopped) await worker.close();
    await api.close();
  });

  const post = (body: unknown) => api.http.post('/v3/event').set('Authorization', `Tracker ${token}`).send(body as object);
  const picture = async (): Promise<DestinationPicture> => (await adminClient(api).get(`/trackers/${trackerId}/destinations/mem/traffic`).expect(200)).body as DestinationPicture;
  const setEnabled = (enabled: boolean) => api.runtime.store.update(trackerId, (t: Tracker) => ({ ...t, destinations: t.destinations.map((d) => ({ ...d, enabled })) }));

  test('count what is delivered and dead-lettered per minute, and mark the moments it failed, paused and recovered', async () => {
    const dest = memoryDestination(name);
    expect((await post(Array.from({ length: 30 }, (_, i) => ({ _event: 'first', n: i })))).status).toBe(202);
    await waitFor(async () => (await picture()).totals.delivered === 30, { message: '30 delivered' });

    dest.failNext.push(new RetryableError('backend error 503', { status: 503 }));
    expect((await post({ _event: 'after a failure' })).status).toBe(202);
    await waitFor(async () => (await picture()).totals.delivered === 31, { message: 'delivered after a retry' });

    dest.failNext.push(new ConfigurationError('the service account has no access'));
    const poison = (await post([{ _event: 'ok' }, { _event: 'poison' }])).body.results[1].id as string;
    dest.recordFaults.set(poison, () => ({ status: 'failed', error: new PermanentError('column type mismatch') }));
    const p = await waitFor(async () => {
      const seen = await picture();
      return seen.totals.delivered === 32 && seen.totals.deadLettered === 1 ? seen : undefined;
    }, { message: 'one delivered, one dead-lettered after the pause' });

    expect(sum(p.delivered)).toBe(32);
    expect(sum(p.deadLettered)).toBe(1);
    expect(p.delivered).toHaveLength(WINDOW_MINUTES);
    // The counts are in the last minutes of the window.
    expect(sum(p.delivered.slice(-2))).toBe(32);
    expect(moments(p.markers)).toEqual([
      '(none) → delivering',
      'delivering → failing: backend error 503',
      'failing → delivering',
      'delivering → paused: the service account has no access',
      'paused → delivering',
    ]);
    // Sampled once a minute (here every 200 ms) while a worker holds it.
    expect(p.backlog.slice(-2).some((b) => b !== null)).toBe(true);
    expect(p.lagMs.slice(-2).some((l) => l !== null)).toBe(true);
  });

  test('a disabled destination’s backlog and lag grow in the samples, between the moments it was disabled and enabled', async () => {
    await setEnabled(false);
    await waitFor(async () => (await picture()).markers[0]?.state === 'disabled', { message: 'the disabled marker' });
    expect((await post(Array.from({ length: 5 }, () => ({ _event: 'while disabled' })))).status).toBe(202);
    const held = await waitFor(async () => {
      const seen = await picture();
      return (seen.backlog[WINDOW_MINUTES - 1] ?? 0) >= 5 && (seen.lagMs[WINDOW_MINUTES - 1] ?? 0) > 0 ? seen : undefined;
    }, { message: 'a sample with the backlog' });
    expect(held.totals.delivered).toBe(32);

    await setEnabled(true);
    const after = await waitFor(async () => {
      const seen = await picture();
      return seen.totals.delivered === 37 && seen.backlog[WINDOW_MINUTES - 1] === 0 ? seen : undefined;
    }, { message: 'the backlog delivered once enabled' });
    expect(moments(after.markers).slice(-3)).toEqual(['paused → delivering', 'delivering → disabled', 'disabled → delivering']);
    // A worker restart is no moment: the state it finds is the state it had.
    const before = after.markers.length;
    await worker.close();
    worker = await startWorkerRuntime(api.config, TEST_REDIS_URL, new ConnectorRegistry([createMemoryConnector() as never]), createLogger('silent'), FAST);
    expect((await post({ _event: 'after a restart' })).status).toBe(202);
    await waitFor(async () => (await picture()).totals.delivered === 38, { message: 'delivered after the restart' });
    expect((await picture()).markers).toHaveLength(before);
  });

  test('removing the destination removes its pictures', async () => {
    const keys = deliveryKeys(api.prefix, { trackerId, destinationId: 'mem' });
    expect(await api.runtime.redis.exists(keys.events)).toBe(1);
    // No worker holds it meanwhile (one could write a last sample after the removal, as it could its status).
    await worker.close();
    stopped = true;
    await adminClient(api).del(`/trackers/${trackerId}/destinations/mem`).expect(200);
    const left: string[] = [];
    let cursor = '0';
    do {
      const [next, found] = await api.runtime.redis.scan(cursor, 'MATCH', `${keys.series}:*`, 'COUNT', 1000);
      cursor = next;
      left.push(...found);
    } while (cursor !== '0');
    expect(left).toEqual([]);
    expect(await api.runtime.redis.exists(keys.events)).toBe(0);
    await adminClient(api).get(`/trackers/${trackerId}/destinations/mem/traffic`).expect(404);
  });
});

describe('the destination series in Redis', () => {
  const prefix = uniquePrefix('dest-series');
  const redis = new Redis(TEST_REDIS_URL);
  const keys = (id: string) => deliveryKeys(prefix, { trackerId: 't', destinationId: id });
  const now = Date.now();

  afterAll(async () => {
    await deletePrefix(prefix);
    redis.disconnect();
  });

  test('cover the last 24 hours; a sample replaces the one of its minute; buckets expire 24 hours after they end', async () => {
    const series = new DestinationSeries(redis, keys('window'));
    await series.sample({ queued: 9, lagMs: 1000 }, now - 24 * HOUR_MS);
    await series.sample({ queued: 7, lagMs: 2000 }, now - 24 * HOUR_MS + MINUTE_MS);
    await series.sample({ queued: 1, lagMs: 10 }, now);
    await series.sample({ queued: 3, lagMs: 30 }, now);
    const p = await series.read(now);
    expect(p.backlog[0]).toBe(7);
    expect(p.lagMs[0]).toBe(2000);
    expect(p.backlog[WINDOW_MINUTES - 1]).toBe(3);
    expect(p.backlog.filter((b) => b !== null)).toEqual([7, 3]);
    const key = seriesKey(keys('window'), bucketOf(now));
    expect(await redis.call('EXPIRETIME', key)).toBe(bucketExpiresAt(bucketOf(now)));
  });

  test('mark a state once, keep the last 100 markers, and leave a state alone that a start may not change', async () => {
    const series = new DestinationSeries(redis, keys('markers'));
    expect(await series.mark('delivering', { onlyFrom: ['', 'disabled'] })).toBe(true);
    expect(await series.mark('delivering')).toBe(false);
    expect(await series.mark('paused', { message: 'x'.repeat(1000) })).toBe(true);
    // A worker starting while the destination is paused does not mark it delivering.
    expect(await series.mark('delivering', { onlyFrom: ['', 'disabled'] })).toBe(false);
    for (let i = 0; i < 150; i++) await series.mark(i % 2 ? 'failing' : 'delivering');
    const { markers } = await series.read();
    expect(markers).toHaveLength(MAX_MARKERS);
    expect(markers[0]).toMatchObject({ state: 'failing', from: 'delivering' });
    expect(await redis.llen(keys('markers').events)).toBe(MAX_MARKERS);
    const paused = await new DestinationSeries(redis, keys('long')).mark('paused', { message: 'y'.repeat(1000) });
    expect(paused).toBe(true);
    expect((await new DestinationSeries(redis, keys('long')).read()).markers[0]!.message).toHaveLength(300);
  });

  test('take bounded memory: a day of samples and deliveries of one destination', async () => {
    const k = keys('day');
    const series = new DestinationSeries(redis, k);
    for (let m = WINDOW_MINUTES - 1; m >= 0; m--) {
      const at = now - m * MINUTE_MS;
      await series.sample({ queued: 100_000 + m, lagMs: 3_600_000 + m }, at);
      await redis.hincrby(seriesKey(k, bucketOf(at)), `${Math.floor(at / MINUTE_MS) % 10}|d`, 5000 + m);
      await redis.hincrby(seriesKey(k, bucketOf(at)), `${Math.floor(at / MINUTE_MS) % 10}|f`, 1);
    }
    let bytes = 0;
    for (const key of series.keysAt(now)) bytes += Number((await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) ?? 0);
    // Measured on Redis 7.0: about 70 KB (docs/traffic.md, "Pictures over time").
    expect(bytes).toBeLessThan(96 * 1024);
    expect((await series.read(now)).totals.delivered).toBe(Array.from({ length: WINDOW_MINUTES }, (_, m) => 5000 + m).reduce((a, b) => a + b, 0));
  });
});

test('a partitioned tracker’s destination is pictured over its partitions: counts and backlogs add up, the lag is the oldest, markers name their partition', () => {
  const picture = (delivered: number, backlog: number | null, lagMs: number | null, markers: DeliveryMarker[]): DestinationPicture => ({
    start: '2026-11-25T00:00:00.000Z',
    stepSeconds: 60,
    delivered: [delivered, 0],
    deadLettered: [0, 1],
    skipped: [2, 0],
    filterErrors: [0, 1],
    backlog: [backlog, null],
    lagMs: [lagMs, null],
    totals: { delivered, deadLettered: 1, skipped: 2, filterErrors: 1 },
    markers,
  });
  const combined = combinePictures([
    picture(3, 10, 500, [{ at: '2026-11-25T00:00:02.000Z', state: 'failing', from: 'delivering', message: 'x' }]),
    picture(4, null, null, []),
    picture(5, 7, 900, Array.from({ length: MAX_MARKERS }, (_, i) => ({ at: `2026-11-25T00:00:01.${String(i).padStart(3, '0')}Z`, state: 'delivering' as const, from: '' as const }))),
  ]);
  expect(combined.delivered).toEqual([12, 0]);
  expect(combined.deadLettered).toEqual([0, 3]);
  expect(combined.skipped).toEqual([6, 0]);
  expect(combined.filterErrors).toEqual([0, 3]);
  expect(combined.totals).toMatchObject({ skipped: 6, filterErrors: 3 });
  expect(combined.backlog).toEqual([17, null]);
  expect(combined.lagMs).toEqual([900, null]);
  expect(combined.totals).toEqual({ delivered: 12, deadLettered: 3, skipped: 6, filterErrors: 3 });
  expect(combined.markers).toHaveLength(MAX_MARKERS);
  expect(combined.markers[0]).toEqual({ at: '2026-11-25T00:00:02.000Z', state: 'failing', from: 'delivering', message: 'x', partition: 0 });
  expect(combined.markers[1]!.partition).toBe(2);
});
