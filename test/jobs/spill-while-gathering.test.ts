import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConnectorRegistry } from '../../connectors/registry';
import { DestinationStatusStore } from '../../jobs/delivery/destination-status';
import { deliveryKeys } from '../../jobs/delivery/keys';
import { startWorkerRuntime, type WorkerRuntime } from '../../jobs/worker-runtime';
import { createLogger } from '../../src/core/logger';
import { startTestApi, type TestApi } from '../helpers/api';
import { createMemoryConnector, memoryDestination } from '../helpers/memory-connector';
import { TEST_REDIS_URL } from '../helpers/redis';
import { waitFor } from '../helpers/wait';
import { FAST_WORKER } from '../helpers/fast-worker';

/**
 * A delivering destination whose batches take long to fill (large, and up to 1.5 s old) while its
 * Redis cap is small: the spiller moves records to disk while the loop gathers a batch, both those
 * the loop holds and those it has not read yet. Every record must still arrive once, in order.
 */
const CAP = 40;
const dataDir = mkdtempSync(path.join(tmpdir(), 'tributary-spill-gather-'));
const name = `gathering-${process.pid}-${Date.now()}`;
let api: TestApi;
let worker: WorkerRuntime;

beforeAll(async () => {
  api = await startTestApi({ DATA_DIR: dataDir }, { destinations: [{ id: 'slow-batches', type: 'memory', enabled: true, settings: { name } }] });
  worker = await startWorkerRuntime(api.config, TEST_REDIS_URL, new ConnectorRegistry([createMemoryConnector({ maxRecords: 5000, maxAgeMs: 1500 }) as never]), createLogger('silent'), {
    ...FAST_WORKER,
    spill: { capRecords: CAP, frameRecords: 16, checkMs: 20 },
  });
});
afterAll(async () => {
  await worker.close();
  await api.close();
  rmSync(dataDir, { recursive: true, force: true });
});

test('records spilled while the loop gathers a batch arrive once each, in order', async () => {
  const keys = deliveryKeys(api.prefix, { trackerId: api.tracker.id, destinationId: 'slow-batches' });
  const status = new DestinationStatusStore(api.runtime.redis, keys);
  const sent: string[] = [];
  // Small requests over a few seconds: the stream passes the cap many times within one batch's age.
  for (let i = 0; i < 120; i++) {
    const events = Array.from({ length: 5 }, (_, k) => ({ _event: 'gathered', n: i * 5 + k }));
    const res = await api.http.post('/v3/event').set('Authorization', `Tracker ${api.token}`).send(events);
    expect(res.status).toBe(202);
    sent.push(...res.body.results.map((r: { id: string }) => r.id));
    await new Promise((resolve) => setTimeout(resolve, 15));
  }
  const dest = memoryDestination(name);
  // Waits at most 20 s, then compares whatever arrived: a loss shows as the difference, not as a timeout.
  // (Status alone would not show a loss: the record count drops when records go to disk, and again when the spool is dropped.)
  await waitFor(async () => (await status.read()).queued === 0 && dest.written.length >= sent.length, { message: 'every record delivered', timeoutMs: 20_000 }).catch(() => undefined);
  expect(dest.written.map((r) => r.id)).toEqual(sent);
  expect(Number(await api.runtime.redis.hget(keys.status, 'spilledRecords'))).toBeGreaterThan(0);
}, 60_000);
