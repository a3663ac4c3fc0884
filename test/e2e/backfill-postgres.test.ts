import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createDefaultRegistry } from '../../connectors';
import { localConnector, queryWarehouse } from '../../connectors/local';
import { postgresConnector } from '../../connectors/postgres';
import { ConnectorRegistry } from '../../connectors/registry';
import type { Connector } from '../../connectors/types';
import { startWorkerRuntime, type WorkerRuntime } from '../../jobs/worker-runtime';
import { createLogger } from '../../src/core/logger';
import { DeliveryAdmin } from '../../src/operator/delivery-admin';
import { DestinationService } from '../../src/operator/destination-service';
import { startTestApi, type TestApi } from '../helpers/api';
import { FAST_DELIVERY } from '../helpers/fast-worker';
import { asAdmin, createTestDatabase, type TestDatabase } from '../helpers/postgres';
import { TEST_REDIS_URL } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

jest.setTimeout(90_000);

/**
 * A PostgreSQL destination added to a tracker with history: the backfill brings the archived
 * events and the users as they are now, through the history lane in its large batches, while live
 * records flow; a second backfill doubles nothing.
 */
const dataDir = mkdtempSync(path.join(tmpdir(), 'tributary-backfill-pg-'));
let db: TestDatabase;
let api: TestApi;
let worker: WorkerRuntime;
let destinations: DestinationService;
let admin: DeliveryAdmin;

beforeAll(async () => {
  db = await createTestDatabase('backfill');
  api = await startTestApi({ DATA_DIR: dataDir }, { destinations: [{ id: 'wh', type: 'local', enabled: true, settings: {} }] });
  worker = await startWorkerRuntime(api.config, TEST_REDIS_URL, new ConnectorRegistry([localConnector, postgresConnector] as Connector[]), createLogger('silent'), {
    discoverIntervalMs: 50,
    leaseMs: 5000,
    delivery: FAST_DELIVERY,
    archive: { backfillEndMarginMs: 1000 },
  });
  destinations = new DestinationService(api.runtime.store, createDefaultRegistry(), dataDir, createLogger('silent'));
  admin = new DeliveryAdmin({ destinations, trackers: api.runtime.store, redis: api.runtime.redis, keyspace: api.config.keyspace, dataDir });
});
afterAll(async () => {
  await worker.close();
  await api.close();
  await db.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

const query = (sql: string) => asAdmin(async (c) => (await c.query(sql)).rows, db.name).catch(() => undefined);

const finished = () =>
  waitFor(async () => {
    const view = await admin.backfill(api.tracker.id, 'pg');
    return view && view.state === 'done' && view.waiting === 0 ? view : undefined;
  }, { timeoutMs: 60_000, intervalMs: 100, message: 'the backfill done and delivered' });

test('history and live records land once each; users as they are now; again, nothing doubles', async () => {
  const since = new Date(Date.now() - 60_000);
  let n = 0;
  const send = async (count: number) => {
    const batch = Array.from({ length: count }, () => ({ _event: 'order', _uid: `u${n % 7}`, n: n++, total: 12.5 }));
    expect((await api.http.post('/v3/event').set('Authorization', `Tracker ${api.token}`).send(batch)).status).toBe(202);
  };
  for (let i = 0; i < 8; i++) await send(100);
  for (let step = 0; step < 3; step++) {
    const users = Array.from({ length: 5 }, (_, u) => ({ _uid: `u${u}`, plan: `p${step}`, ...(step === 0 ? { email: `u${u}@example.com` } : {}) }));
    expect((await api.http.post('/v3/user').set('Authorization', `Tracker ${api.token}`).send(users)).status).toBe(202);
  }
  // Routed (and so archived) before the destination exists: the warehouse has them all.
  const warehouse = path.join(dataDir, 'warehouse', `${api.tracker.id}.duckdb`);
  await waitFor(async () => {
    try {
      return (await queryWarehouse(warehouse, "SELECT count(*)::INT FROM events")).rows[0]?.[0] === 800 || undefined;
    } catch {
      return undefined;
    }
  }, { timeoutMs: 30_000, message: 'the first 800 events routed' });

  await destinations.add(api.tracker.id, { type: 'postgres', id: 'pg', settings: { ...db.settings, schema: 'shop' } });
  const live = (async () => {
    for (let i = 0; i < 5; i++) {
      await send(20);
      await new Promise((r) => setTimeout(r, 40));
    }
  })();
  await admin.startBackfill(api.tracker.id, 'pg', { since, until: new Date(Date.now() + 5000), resources: ['events', 'users'] });
  await live;
  await finished();
  const counted = await waitFor(async () => {
    const r = await query('SELECT count(*)::int AS n, count(DISTINCT _id)::int AS ids, count(DISTINCT n)::int AS ns FROM shop.events');
    return r?.[0]?.n === 900 ? r[0] : undefined;
  }, { timeoutMs: 30_000, message: '900 events in PostgreSQL' });
  expect(counted).toEqual({ n: 900, ids: 900, ns: 900 });
  expect(await query('SELECT _uid, plan, email FROM shop.users ORDER BY _uid')).toEqual(Array.from({ length: 5 }, (_, u) => ({ _uid: `u${u}`, plan: 'p2', email: `u${u}@example.com` })));

  await admin.startBackfill(api.tracker.id, 'pg', { since, until: new Date(), resources: ['events', 'users'] });
  await finished();
  expect(await query('SELECT count(*)::int AS n FROM shop.events')).toEqual([{ n: 900 }]);
});
