import { randomUUID } from 'node:crypto';
import { ConnectorRegistry } from '../../connectors/registry';
import { ImportLane } from '../../jobs/history/import-lane';
import { startWorkerRuntime, type WorkerRuntime } from '../../jobs/worker-runtime';
import { createLogger } from '../../src/core/logger';
import type { TrackedRecord } from '../../src/core/records/types';
import { startTestApi, type TestApi } from '../helpers/api';
import { FAST_WORKER } from '../helpers/fast-worker';
import { createMemoryConnector, memoryDestination } from '../helpers/memory-connector';
import { TEST_REDIS_URL } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

/**
 * History waits while the API's event loop is delayed (HISTORY_MAX_API_DELAY_MS, src/core/loop-delay.ts),
 * and live records do not: with the API's loop reported busy, imported records stay in the history
 * lane while a live one is delivered; once it is not, they follow.
 */
let api: TestApi;
let worker: WorkerRuntime;
let apiBusy = true;
const name = `held-back-${randomUUID()}`;

beforeAll(async () => {
  api = await startTestApi({}, { destinations: [{ id: 'm', type: 'memory', enabled: true, settings: { name } }] });
  worker = await startWorkerRuntime(api.config, TEST_REDIS_URL, new ConnectorRegistry([createMemoryConnector() as never]), createLogger('silent'), { ...FAST_WORKER, historyHeldBack: () => apiBusy });
});
afterAll(async () => {
  await worker.close();
  await api.close();
});

const imported = (n: number): TrackedRecord => ({ kind: 'event', id: `imported-${n}`, receivedAt: '2026-11-29T00:00:00.000Z', eventAt: '2025-06-01T00:00:00.000Z', event: 'legacy', properties: { n } });

test('imported records wait while the API is busy, a live record does not; they follow once it is not', async () => {
  const records = Array.from({ length: 30 }, (_, n) => imported(n));
  await new ImportLane(api.runtime.redis, api.config.keyspace).write(api.tracker, 0, { texts: records.map((r) => JSON.stringify(r)), values: () => records });
  const res = await api.http.post('/v3/event').set('Authorization', `Tracker ${api.token}`).send({ _event: 'live', _id: 'live-1' });
  expect(res.status).toBe(202);

  const dest = memoryDestination(name);
  await waitFor(() => dest.events.has('live-1'), { timeoutMs: 10_000, message: 'the live record delivered' });
  // Several of the worker's polls (100 ms) with history waiting in its lane.
  await new Promise((r) => setTimeout(r, 600));
  expect([...dest.events.keys()].filter((id) => id.startsWith('imported-'))).toEqual([]);

  apiBusy = false;
  await waitFor(() => records.every((r) => dest.events.has(r.id)), { timeoutMs: 10_000, message: 'history delivered once the API is not busy' });
});
