import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { localConnector, queryWarehouse } from '../../connectors/local';
import { withFileMutex } from '../../connectors/local/file-mutex';
import { ConnectorRegistry } from '../../connectors/registry';
import type { Connector } from '../../connectors/types';
import { DestinationStatusStore } from '../../jobs/delivery/destination-status';
import { deliveryKeys } from '../../jobs/delivery/keys';
import { startWorkerRuntime, type WorkerRuntime } from '../../jobs/worker-runtime';
import { createLogger } from '../../src/core/logger';
import { startTestApi, type TestApi } from '../helpers/api';
import { collectGarbageOften } from '../helpers/gc';
import { TEST_REDIS_URL } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

/**
 * The local warehouse's writer stuck behind its file for longer than the delivery deadline, with
 * garbage collected all along: each attempt is abandoned and retried, an abandoned attempt never
 * writes late, and once the file is free every record lands once, updates in order.
 */
const dataDir = mkdtempSync(path.join(tmpdir(), 'tributary-local-hang-'));
let api: TestApi;
let worker: WorkerRuntime;

beforeAll(async () => {
  api = await startTestApi({ DATA_DIR: dataDir }, { destinations: [{ id: 'wh', type: 'local', enabled: true, settings: {} }] });
  const delivery = { backoff: { baseMs: 20, maxMs: 100 }, maxRecordAttempts: 10, configRecheckMs: 200, pollMs: 100, writeTimeoutMs: 300 };
  worker = await startWorkerRuntime(api.config, TEST_REDIS_URL, new ConnectorRegistry([localConnector as Connector]), createLogger('silent'), { discoverIntervalMs: 50, delivery });
});
afterAll(async () => {
  await worker.close();
  await api.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const post = (p: string, body: unknown) => api.http.post(p).set('Authorization', `Tracker ${api.token}`).send(body as object);
const file = () => path.join(dataDir, 'warehouse', `${api.tracker.id}.duckdb`);

test('a write stuck past the deadline is abandoned and retried; nothing lands twice or out of order', async () => {
  let release!: () => void;
  const held = withFileMutex(file(), () => new Promise<void>((r) => (release = r)));
  const stopGc = collectGarbageOften(100);
  const status = new DestinationStatusStore(api.runtime.redis, deliveryKeys(api.prefix, { trackerId: api.tracker.id, destinationId: 'wh' }));
  try {
    const events = Array.from({ length: 40 }, (_, n) => ({ _event: 'stuck', n }));
    expect((await post('/v3/event', events)).status).toBe(202);
    for (const plan of ['free', 'pro', 'team']) expect((await post('/v3/user', { _uid: 'u1', plan })).status).toBe(202);
    const stalled = await waitFor(async () => {
      const s = await status.read();
      return s.attempts >= 2 && s.lastError?.message.includes('abandoned') ? s : undefined;
    }, { message: 'two abandoned attempts in the status' });
    expect(stalled.inFlight).toBeGreaterThan(0);
  } finally {
    release();
    await held;
    stopGc();
  }
  const rows = await waitFor(async () => {
    try {
      const e = await queryWarehouse(file(), "select count(*)::INTEGER, count(distinct _id)::INTEGER from events where _event = 'stuck'");
      const u = await queryWarehouse(file(), "select plan from users where _uid = 'u1'");
      return e.rows[0]![0] === 40 && u.rows[0]?.[0] === 'team' ? { events: e.rows[0], users: u.rows } : undefined;
    } catch {
      return undefined;
    }
  }, { timeoutMs: 20_000, message: 'delivery once the file is free' });
  expect(rows).toEqual({ events: [40, 40], users: [['team']] });
  expect(await waitFor(async () => ((await status.read()).queued === 0 ? status.read() : undefined))).toMatchObject({ inFlight: 0, attempts: 0, writingSince: null });
});
