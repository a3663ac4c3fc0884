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
  worker = await startWorkerRuntime(api.config, TEST_REDIS_URL, connectors, createLogger('silent'), {
    discoverIntervalMs: 50,
    leaseMs: 5000,
    delivery: FAST_DELIVERY,
    // One process, one clock, a group commit of milliseconds: a second past a range's end is plenty.
    archive: { backfillEndMarginMs: 1000 },
  });
  destinations = new DestinationService(api.runtime.store, createDefaultRegistry(), dataDir, createLogger('silent'));
  admin = new DeliveryAdmin({ destinations, trackers: api.runtime.store, redis: api.runtime.redis, keyspace: api.config.keyspace, dataDir });
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

test('users and sessions: a destination added later gets each as it is now, merged from its updates, in order with the live updates sent meanwhile', async () => {
  const since = new Date(Date.now() - 60_000);
  const update = async (step: number) => {
    const users = Array.from({ length: 10 }, (_, u) => ({ _uid: `m${u}`, plan: `p${step}`, [`seen_${step}`]: true, ...(step === 3 ? { coupon: 'X' } : step === 4 ? { coupon: null } : {}) }));
    expect((await api.http.post('/v3/user').set('Authorization', `Tracker ${api.token}`).send(users)).status).toBe(202);
  };
  for (let step = 0; step < 5; step++) await update(step);
  expect((await api.http.post('/v3/session').set('Authorization', `Tracker ${api.token}`).send([{ _sid: 's1', _uid: 'm1', landing: '/a' }, { _sid: 's1', pages: 3 }])).status).toBe(202);
  await waitFor(async () => (await rows(`${api.tracker.id}.duckdb`, "SELECT plan FROM users WHERE _uid = 'm9'"))?.[0]?.[0] === 'p4', { timeoutMs: 30_000, message: 'the first updates in wh' });

  await destinations.add(api.tracker.id, { type: 'local', id: 'people', settings: { path: 'warehouse/people.duckdb' } });
  // Live updates go on while the backfill runs: the last one must win everywhere.
  const live = (async () => {
    for (let step = 5; step < 10; step++) {
      await update(step);
      await new Promise((r) => setTimeout(r, 30));
    }
  })();
  await admin.startBackfill(api.tracker.id, 'people', { since, until: new Date(), resources: ['users', 'sessions'] });
  await live;
  const view = await finished('people');
  expect(view.states).toBeGreaterThanOrEqual(11);

  const people = await waitFor(async () => {
    const r = await rows('people.duckdb', "SELECT count(*)::INT, count(*) FILTER (WHERE plan = 'p9')::INT, count(*) FILTER (WHERE seen_0 AND seen_4 AND seen_9)::INT, count(*) FILTER (WHERE _properties->>'coupon' IS NOT NULL)::INT FROM users WHERE _uid LIKE 'm%'");
    return r?.[0]?.[1] === 10 ? r[0] : undefined;
  }, { timeoutMs: 30_000, message: 'every user at its last update in people' }).catch(async (err: unknown) => {
    throw new Error(`${(err as Error).message}; people holds ${JSON.stringify(await rows('people.duckdb', "SELECT _uid, plan FROM users ORDER BY _uid"))}`);
  });
  expect(people).toEqual([10, 10, 10, 0]);
  // The session as the destination that had it live holds it.
  const session = "SELECT _uid, landing, pages::VARCHAR FROM sessions WHERE _sid = 's1'";
  expect(await rows('people.duckdb', session)).toEqual([['m1', '/a', '3']]);
  expect(await rows(`${api.tracker.id}.duckdb`, session)).toEqual([['m1', '/a', '3']]);
  // No event went: only users and sessions were asked for.
  expect(await rows('people.duckdb', 'SELECT count(*)::INT FROM events')).toEqual([[0]]);
});

test('a backfill of thousands into BigQuery goes by load jobs, a chunk each, and a second one doubles nothing', async () => {
  const since = new Date(Date.now() - 1000);
  for (let i = 0; i < 60; i++) await sendEvents(50);
  await destinations.add(api.tracker.id, { type: 'bigquery', id: 'bq-load', settings: { projectId: PROJECT, dataset: `${dataset}_load`, endpoint: bigquery.url } });
  const loadsBefore = bigquery.stats.loadJobs;
  await admin.startBackfill(api.tracker.id, 'bq-load', { since, until: new Date(), resources: ['events'] });
  await finished('bq-load');
  const count = async () => {
    const [r] = await readerClient(bigquery).query({ query: `SELECT count(*) AS n, count(DISTINCT _id) AS ids FROM \`${PROJECT}.${dataset}_load.events\`` });
    return r[0] as { n: number; ids: number };
  };
  expect(await count()).toEqual({ n: 3000, ids: 3000 });
  expect(bigquery.stats.loadJobs - loadsBefore).toBeGreaterThanOrEqual(1);
  await admin.startBackfill(api.tracker.id, 'bq-load', { since, until: new Date(), resources: ['events'] });
  await finished('bq-load');
  expect(await count()).toEqual({ n: 3000, ids: 3000 });
});

test('refused: an empty range, a second backfill while one runs', async () => {
  await expect(admin.startBackfill(api.tracker.id, 'wh', { since: new Date(), until: new Date(0), resources: ['events'] })).rejects.toThrow(/the range is empty/);
  await admin.startBackfill(api.tracker.id, 'wh', { since: new Date(Date.now() - 1000), until: new Date(Date.now() + 60_000), resources: ['events'] });
  await expect(admin.startBackfill(api.tracker.id, 'wh', { since: new Date(0), until: new Date(), resources: ['events'] })).rejects.toBeInstanceOf(DeliveryAdminError);
  expect(await admin.cancelBackfill(api.tracker.id, 'wh')).toBe(true);
  expect((await admin.backfill(api.tracker.id, 'wh'))!.state).toBe('cancelled');
});

test('a backfill given no resources sends users and sessions too, each key as it is now', async () => {
  const since = new Date(Date.now() - 60_000);
  const post = async (kind: 'user' | 'session', body: object) => expect((await api.http.post(`/v3/${kind}`).set('Authorization', `Tracker ${api.token}`).send(body)).status).toBe(202);
  await post('user', [
    { _uid: 'nr-ada', plan: 'free', email: 'ada@example.com' },
    { _uid: 'nr-bob', plan: 'pro' },
  ]);
  await post('user', { _uid: 'nr-ada', plan: 'pro', email: null });
  await post('session', [
    { _sid: 'nr-s1', _uid: 'nr-ada', landing_page: '/pricing' },
    { _sid: 'nr-s2', _uid: 'nr-bob' },
  ]);
  await post('session', { _sid: 'nr-s1', converted: true });
  await waitFor(async () => (await rows(`${api.tracker.id}.duckdb`, `SELECT count(*)::INT FROM sessions WHERE _sid LIKE 'nr-%'`))?.[0]?.[0] === 2, { timeoutMs: 30_000, message: 'the sessions in wh' });

  await destinations.add(api.tracker.id, { type: 'local', id: 'late', settings: { path: 'warehouse/late.duckdb' } });
  const started = await admin.startBackfill(api.tracker.id, 'late', { since, until: new Date() });
  expect(started.resources).toEqual(['events', 'users', 'sessions']);
  await finished('late');
  // The e-mail was cleared before the backfill: the merged state has none, so no column either.
  const users = await waitFor(async () => {
    const r = await rows('late.duckdb', `SELECT _uid, plan, _properties->>'email' FROM users WHERE _uid LIKE 'nr-%' ORDER BY _uid`);
    return r?.length === 2 && r[0]![1] === 'pro' ? r : undefined;
  }, { timeoutMs: 30_000, message: 'both users, merged, in late' });
  expect(users).toEqual([
    ['nr-ada', 'pro', null],
    ['nr-bob', 'pro', null],
  ]);
  expect(await rows('late.duckdb', `SELECT _sid, _uid, landing_page, converted FROM sessions WHERE _sid LIKE 'nr-%' ORDER BY _sid`)).toEqual([
    ['nr-s1', 'nr-ada', '/pricing', true],
    ['nr-s2', 'nr-bob', null, null],
  ]);
});
