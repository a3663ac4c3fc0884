import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { bigqueryConnector } from '../../connectors/bigquery';
import { localConnector, queryWarehouse } from '../../connectors/local';
import { ConnectorRegistry } from '../../connectors/registry';
import type { Connector } from '../../connectors/types';
import { createDefaultRegistry } from '../../connectors';
import { startWorkerRuntime, type WorkerRuntime } from '../../jobs/worker-runtime';
import { createLogger } from '../../src/core/logger';
import { DeliveryAdmin, DeliveryAdminError, type BackfillView } from '../../src/operator/delivery-admin';
import { DestinationService } from '../../src/operator/destination-service';
import { startBigQueryFake, type BigQueryFake } from '../fakes/bigquery';
import { PROJECT, readerClient, uniqueDataset } from '../connectors/bigquery/helpers';
import { startTestApi, type TestApi } from '../helpers/api';
import { FAST_DELIVERY } from '../helpers/fast-worker';
import { TEST_REDIS_URL } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

// The BigQuery client's transport on Node's fetch under jest: see test/fakes/bigquery/jest-transport.ts.
jest.mock('teeny-request', () => jest.requireActual<typeof import('../fakes/bigquery/jest-transport')>('../fakes/bigquery/jest-transport').teenyRequestOnNativeFetch());
jest.setTimeout(90_000);

/**
 * Backfills with the real worker, the local warehouse and the BigQuery fake: a destination added
 * later receives the history from the archive and the live records alike, each once, through its
 * rules, while live traffic flows; a second backfill, long past BigQuery's insertId window,
 * doubles nothing.
 */
const dataDir = mkdtempSync(path.join(tmpdir(), 'tributary-backfill-'));
const dataset = uniqueDataset('backfill');
let bigquery: BigQueryFake;
let api: TestApi;
let worker: WorkerRuntime;
let destinations: DestinationService;
let admin: DeliveryAdmin;

beforeAll(async () => {
  // insertIds forgotten after 50 ms: every re-send is "far past" the window.
  bigquery = await startBigQueryFake({ dedupWindowMs: 50 });
  api = await startTestApi({ DATA_DIR: dataDir }, { destinations: [{ id: 'wh', type: 'local', enabled: true, settings: {} }] });
  const connectors = new ConnectorRegistry([localConnector, bigqueryConnector] as Connector[]);
  worker = await startWorkerRuntime(api.config, TEST_REDIS_URL, connectors, createLogger('silent'), { discoverIntervalMs: 50, leaseMs: 5000, delivery: FAST_DELIVERY });
  destinations = new DestinationService(api.runtime.store, createDefaultRegistry(), dataDir, createLogger('silent'));
  admin = new DeliveryAdmin({ destinations, redis: api.runtime.redis, keyspace: api.config.keyspace, dataDir });
});
afterAll(async () => {
  await worker.close();
  await api.close();
  await bigquery.close();
  rmSync(dataDir, { recursive: true, force: true });
});

let sent = 0;
async function sendEvents(n: number): Promise<void> {
  const batch = Array.from({ length: n }, () => ({ _event: 'order', _uid: `u${sent % 13}`, n: sent++, email: 'a@example.com', total: 10 }));
  const res = await api.http.post('/v3/event').set('Authorization', `Tracker ${api.token}`).send(batch);
  expect(res.status).toBe(202);
}

async function rows(file: string, sql: string): Promise<unknown[][] | undefined> {
  try {
    return (await queryWarehouse(path.join(dataDir, 'warehouse', file), sql)).rows;
  } catch {
    return undefined;
  }
}

/** Until the backfill is read and its lane delivered. */
const finished = (destinationId: string) =>
  waitFor(async () => {
    const view = await admin.backfill(api.tracker.id, destinationId);
    return view && view.state === 'done' && view.waiting === 0 ? view : undefined;
  }, { timeoutMs: 60_000, intervalMs: 100, message: `the backfill of ${destinationId} done and delivered` });

test('a destination added later gets the history and the live records alike, once each, through its rules, while live traffic flows', async () => {
  const since = new Date(Date.now() - 60_000);
  for (let i = 0; i < 10; i++) await sendEvents(50);
  await waitFor(async () => (await rows(`${api.tracker.id}.duckdb`, 'SELECT count(*)::INT FROM events'))?.[0]?.[0] === 500, { timeoutMs: 30_000, message: 'the first 500 in wh' });

  await destinations.add(api.tracker.id, { type: 'local', id: 'later', settings: { path: 'warehouse/later.duckdb' }, rules: { drop: ['email'] } });
  // Live records keep coming while the history goes.
  const live = (async () => {
    for (let i = 0; i < 10; i++) {
      await sendEvents(20);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  const started = await admin.startBackfill(api.tracker.id, 'later', { since, until: new Date(Date.now() + 5000), resources: ['events'] });
  expect(started).toMatchObject({ state: 'running', resources: ['events'] });
  await live;
  const view: BackfillView = await finished('later');
  expect(view.read).toBeGreaterThanOrEqual(500);

  const counted = await waitFor(async () => {
    const r = await rows('later.duckdb', 'SELECT count(*)::INT, count(DISTINCT _id)::INT, count(DISTINCT n)::INT FROM events');
    return r?.[0]?.[0] === 700 ? r[0] : undefined;
  }, { timeoutMs: 30_000, message: 'all 700 events in later' });
  expect(counted).toEqual([700, 700, 700]);
  // Its rules as they are now: no e-mail column.
  expect(await rows('later.duckdb', "SELECT count(*)::INT FROM duckdb_columns() WHERE table_name = 'events' AND column_name = 'email'")).toEqual([[0]]);

  // Again: nothing doubled.
  await admin.startBackfill(api.tracker.id, 'later', { since, until: new Date(), resources: ['events'] });
  await finished('later');
  expect(await rows('later.duckdb', 'SELECT count(*)::INT FROM events')).toEqual([[700]]);
});

test('a second backfill into BigQuery, long past its insertId window, doubles nothing', async () => {
  const since = new Date(Date.now() - 120_000);
  await destinations.add(api.tracker.id, { type: 'bigquery', id: 'bq', settings: { projectId: PROJECT, dataset, endpoint: bigquery.url } });
  await admin.startBackfill(api.tracker.id, 'bq', { since, until: new Date(), resources: ['events'] });
  await finished('bq');
  const count = async () => {
    const [r] = await readerClient(bigquery).query({ query: `SELECT count(*) AS n, count(DISTINCT _id) AS ids FROM \`${PROJECT}.${dataset}.events\`` });
    return r[0] as { n: number; ids: number };
  };
  expect(await count()).toEqual({ n: sent, ids: sent });
  await new Promise((r) => setTimeout(r, 100));
  await admin.startBackfill(api.tracker.id, 'bq', { since, until: new Date(), resources: ['events'] });
  await finished('bq');
  expect(await count()).toEqual({ n: sent, ids: sent });
});

test('refused: users and sessions (not yet), an empty range, a second backfill while one runs', async () => {
  await expect(admin.startBackfill(api.tracker.id, 'wh', { since: new Date(0), until: new Date(), resources: ['events', 'users'] })).rejects.toThrow(/backfilling users is not available yet/);
  await expect(admin.startBackfill(api.tracker.id, 'wh', { since: new Date(), until: new Date(0), resources: ['events'] })).rejects.toThrow(/the range is empty/);
  await admin.startBackfill(api.tracker.id, 'wh', { since: new Date(Date.now() - 1000), until: new Date(Date.now() + 60_000), resources: ['events'] });
  await expect(admin.startBackfill(api.tracker.id, 'wh', { since: new Date(0), until: new Date(), resources: ['events'] })).rejects.toBeInstanceOf(DeliveryAdminError);
  expect(await admin.cancelBackfill(api.tracker.id, 'wh')).toBe(true);
  expect((await admin.backfill(api.tracker.id, 'wh'))!.state).toBe('cancelled');
});
