import { bigqueryConnector } from '../../../connectors/bigquery';
import type { Connector } from '../../../connectors/types';
import { ConnectorRegistry } from '../../../connectors/registry';
import { DestinationStatusStore } from '../../../jobs/delivery/destination-status';
import { deliveryKeys } from '../../../jobs/delivery/keys';
import { startWorkerRuntime, type WorkerRuntime } from '../../../jobs/worker-runtime';
import { createLogger } from '../../../src/core/logger';
import { startBigQueryFake, type BigQueryFake } from '../../fakes/bigquery';
import { startTestApi, type TestApi } from '../../helpers/api';
import { TEST_REDIS_URL } from '../../helpers/redis';
import { waitFor } from '../../helpers/wait';
import { json, PROJECT, readerClient, uniqueDataset } from './helpers';

// The client's transport on Node's fetch under jest: see test/fakes/bigquery/jest-transport.ts.
jest.mock('teeny-request', () => jest.requireActual<typeof import('../../fakes/bigquery/jest-transport')>('../../fakes/bigquery/jest-transport').teenyRequestOnNativeFetch());

/** HTTP → queue → worker → BigQuery (the fake, through the real client), read back with queries. */
const FAST = { discoverIntervalMs: 50, leaseMs: 5000, delivery: { backoff: { baseMs: 10, maxMs: 100 }, maxRecordAttempts: 50, configRecheckMs: 200, pollMs: 100, writeTimeoutMs: 30_000 } };
const dataset = uniqueDataset('e2e');
let fake: BigQueryFake;
let api: TestApi;
let worker: WorkerRuntime;

beforeAll(async () => {
  fake = await startBigQueryFake();
  api = await startTestApi({}, { captureContext: true, destinations: [{ id: 'bq', type: 'bigquery', enabled: true, settings: { projectId: PROJECT, dataset, endpoint: fake.url } }] });
  worker = await startWorkerRuntime(api.config, TEST_REDIS_URL, new ConnectorRegistry([bigqueryConnector as Connector]), createLogger('silent'), FAST);
});
afterAll(async () => {
  await worker.close();
  await api.close();
  await fake.close();
});
afterEach(() => fake.faults.clear());

const post = async (path: string, body: unknown) => {
  const res = await api.http.post(path).set('Authorization', `Tracker ${api.token}`).send(body as object);
  expect(res.status).toBe(202);
  return res.body as { id?: string; results?: Array<{ id: string }> };
};
const query = async (sql: string) => (await readerClient(fake).query(sql.replace(/@@/g, `${PROJECT}.${dataset}`)))[0] as Array<Record<string, unknown>>;
const rowsOf = (sql: string, n: number, message: string) =>
  waitFor(
    async () => {
      try {
        const rows = await query(sql);
        return rows.length === n ? rows : undefined;
      } catch {
        return undefined;
      }
    },
    { timeoutMs: 20_000, intervalMs: 100, message },
  );

test('users merge in accepted order with null clears; sessions keep their _uid; events land once each', async () => {
  await post('/v3/user', { _uid: 'u1', plan: 'free', seats: 3, city: 'Oslo' });
  await post('/v3/user', { _uid: 'u1', plan: 'pro', seats: null });
  await post('/v3/session', { _sid: 's1', _uid: 'u1', source: 'ads' });
  await post('/v3/session', { _sid: 's1', step: 2 });
  const res = await post('/v3/event', Array.from({ length: 50 }, (_, i) => ({ _event: 'view', _uid: 'u1', _sid: 's1', i, page: `/p${i}` })));
  const events = await rowsOf('SELECT _id, i, page FROM `@@.events` ORDER BY i', 50, '50 events');
  expect(events.map((e) => e._id)).toEqual(res.results!.map((r) => r.id));

  await rowsOf("SELECT _uid FROM `@@.users` WHERE _uid = 'u1' AND plan = 'pro'", 1, 'second user update');
  const [u] = await query('SELECT * FROM `@@.users`');
  expect(u).toMatchObject({ _uid: 'u1', plan: 'pro', city: 'Oslo' });
  // Both updates may reach one batch (then `seats` never had a column) or two (then it is NULL).
  expect(u!.seats ?? null).toBeNull();
  expect(json(u!._properties)).toEqual({ plan: 'pro', city: 'Oslo' });
  expect(json(u!._context)).toMatchObject({ ip: expect.any(String) });
  await rowsOf('SELECT step FROM `@@.sessions` WHERE step = 2', 1, 'second session update');
  expect((await query('SELECT _uid, source, step FROM `@@.sessions`'))[0]).toEqual({ _uid: 'u1', source: 'ads', step: 2 });
});

test('schema evolution and type conflicts over HTTP: new columns, no value lost', async () => {
  await post('/v3/event', { _event: 'typed', n: 1 });
  await rowsOf("SELECT n FROM `@@.events` WHERE _event = 'typed'", 1, 'first typed event');
  await post('/v3/event', [{ _event: 'typed', n: 'two', extra: { deep: [1] } }]);
  const rows = await rowsOf("SELECT n, extra, JSON_VALUE(_properties, '$.n') AS raw FROM `@@.events` WHERE _event = 'typed' ORDER BY _id", 2, 'second typed event');
  expect(rows[1]).toEqual({ n: null, extra: '{"deep":[1]}', raw: 'two' });
});

test('a storm of 5xx, quota errors and lost answers: every record lands exactly once', async () => {
  fake.faults.backendError('tabledata.insertAll', 4).rateLimit('jobs.query', 2).inject('tabledata.insertAll', { kind: 'lose-response' }, { times: 2 }).inject('jobs.query', { kind: 'lose-response' }, { times: 2, when: (c) => String(c.body.query).startsWith('MERGE') });
  for (let b = 0; b < 5; b++) {
    await post('/v3/event', Array.from({ length: 40 }, (_, i) => ({ _event: 'storm', n: b * 40 + i })));
    await post('/v3/user', [{ _uid: `storm-${b}`, batch: b }, { _uid: 'storm-all', [`seen_${b}`]: true }]);
  }
  // The faults have hit, and the destination has confirmed everything: the retries after the last
  // lost answer have run too. (A retry after a lost insertAll finds its rows and sends none again,
  // so the second lost answer may find no insertAll left to hit.)
  const status = new DestinationStatusStore(api.runtime.redis, deliveryKeys(api.prefix, { trackerId: api.tracker.id, destinationId: 'bq' }));
  await waitFor(async () => (fake.faults.fired['tabledata.insertAll'] ?? 0) >= 5 && (fake.faults.fired['jobs.query'] ?? 0) >= 4 && (await status.read()).queued === 0, { timeoutMs: 20_000, message: 'faults used and everything confirmed' });
  const events = await rowsOf("SELECT n FROM `@@.events` WHERE _event = 'storm' ORDER BY n", 200, '200 storm events');
  expect(events.map((e) => e.n)).toEqual(Array.from({ length: 200 }, (_, i) => i));
  await rowsOf("SELECT _uid FROM `@@.users` WHERE STARTS_WITH(_uid, 'storm-')", 6, 'six storm users');
  await rowsOf("SELECT _uid FROM `@@.users` WHERE _uid = 'storm-all' AND seen_4", 1, 'last merge');
  const [all] = await query("SELECT _properties FROM `@@.users` WHERE _uid = 'storm-all'");
  expect(json(all!._properties)).toEqual({ seen_0: true, seen_1: true, seen_2: true, seen_3: true, seen_4: true });
});
