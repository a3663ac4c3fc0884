import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { bigqueryConnector } from '../../connectors/bigquery';
import { googleSheetsConnector } from '../../connectors/google-sheets';
import { localConnector, queryWarehouse } from '../../connectors/local';
import { ConnectorRegistry } from '../../connectors/registry';
import type { Connector } from '../../connectors/types';
import { startWorkerRuntime, type WorkerRuntime } from '../../jobs/worker-runtime';
import { createDefaultRegistry } from '../../connectors';
import { createLogger } from '../../src/core/logger';
import { DeliveryAdmin } from '../../src/operator/delivery-admin';
import { DestinationService } from '../../src/operator/destination-service';
import { startBigQueryFake, type BigQueryFake } from '../fakes/bigquery';
import { SheetsFake } from '../fakes/sheets';
import { PROJECT, readerClient, uniqueDataset } from '../connectors/bigquery/helpers';
import { rowsOf } from '../connectors/google-sheets/harness';
import { startTestApi, type TestApi } from '../helpers/api';
import { TEST_REDIS_URL } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

// The BigQuery client's transport on Node's fetch under jest: see test/fakes/bigquery/jest-transport.ts.
jest.mock('teeny-request', () => jest.requireActual<typeof import('../fakes/bigquery/jest-transport')>('../fakes/bigquery/jest-transport').teenyRequestOnNativeFetch());
jest.setTimeout(60_000);

/**
 * One tracker, four destinations, each receiving what its rules choose, through the real worker
 * and the real client libraries against the Sheets and BigQuery fakes:
 * - a marketing Sheet of signups and orders only, one tab per event, three columns kept, one renamed;
 * - BigQuery without e-mail addresses, nested objects flattened, events only from a total of 10;
 * - a local warehouse without rules, which still gets everything;
 * - a local warehouse whose filter fails on records without `total`: counted, never stalling delivery.
 */
const FAST = { discoverIntervalMs: 50, leaseMs: 5000, delivery: { backoff: { baseMs: 10, maxMs: 100 }, maxRecordAttempts: 20, configRecheckMs: 200, pollMs: 100, writeTimeoutMs: 30_000 } };
const dataDir = mkdtempSync(path.join(tmpdir(), 'tributary-rules-'));
const dataset = uniqueDataset('rules');
let bigquery: BigQueryFake;
let sheets: SheetsFake;
let spreadsheetId: string;
let api: TestApi;
let worker: WorkerRuntime;
let destinations: DestinationService;
let admin: DeliveryAdmin;

beforeAll(async () => {
  bigquery = await startBigQueryFake();
  sheets = await SheetsFake.start();
  spreadsheetId = sheets.createSpreadsheet('Marketing', ['Sheet1']).id;
  api = await startTestApi(
    { DATA_DIR: dataDir },
    {
      destinations: [
        { id: 'wh', type: 'local', enabled: true, settings: {} },
        {
          id: 'marketing',
          type: 'google-sheets',
          enabled: true,
          settings: { spreadsheetId, endpoint: sheets.url, rollover: 'none', tab: '{_event}' },
          rules: { filter: "_type == 'event' && _event in ['signup', 'order']", keep: ['total', 'currency', 'plan'], rename: { total: 'amount' } },
        },
        { id: 'bq', type: 'bigquery', enabled: true, settings: { projectId: PROJECT, dataset, endpoint: bigquery.url }, rules: { filter: "_type != 'event' || total >= 10", drop: ['email'], flatten: true } },
        { id: 'strict', type: 'local', enabled: true, settings: { path: 'warehouse/strict.duckdb' }, rules: { filter: 'total >= 10' } },
      ],
    },
  );
  const connectors = new ConnectorRegistry([localConnector, bigqueryConnector, googleSheetsConnector] as Connector[]);
  worker = await startWorkerRuntime(api.config, TEST_REDIS_URL, connectors, createLogger('silent'), FAST);
  destinations = new DestinationService(api.runtime.store, createDefaultRegistry(), dataDir, createLogger('silent'));
  admin = new DeliveryAdmin({ destinations, trackers: api.runtime.store, redis: api.runtime.redis, keyspace: api.config.keyspace, dataDir });
});
afterAll(async () => {
  await worker.close();
  await api.close();
  await bigquery.close();
  await sheets.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const send = async (path: string, body: unknown) => {
  const res = await api.http.post(path).set('Authorization', `Tracker ${api.token}`).send(body as object);
  expect(res.status).toBe(202);
};

async function localRows(file: string, sql: string): Promise<unknown[][] | undefined> {
  try {
    return (await queryWarehouse(path.join(dataDir, 'warehouse', file), sql)).rows;
  } catch {
    return undefined;
  }
}

beforeAll(async () => {
  await send('/v3/user', { _uid: 'alice', plan: 'pro', email: 'alice@example.com', address: { city: 'Lyon', zip: '69001' } });
  await send('/v3/event', [
    { _event: 'page_view', _uid: 'alice', path: '/' },
    { _event: 'signup', _uid: 'alice', plan: 'pro', email: 'alice@example.com', utm_source: 'newsletter' },
    { _event: 'order', _uid: 'alice', total: 42, currency: 'EUR', email: 'alice@example.com', address: { city: 'Lyon', zip: '69001' } },
    { _event: 'order', _uid: 'bob', total: 5, currency: 'EUR' },
    { _event: 'click', _uid: 'bob', target: 'buy' },
  ]);
});

test('the marketing Sheet gets only signups and orders, one tab each, with the kept and renamed columns', async () => {
  const tab = (title: string) => {
    try {
      return rowsOf(sheets.values(spreadsheetId, title));
    } catch {
      return [];
    }
  };
  const orders = await waitFor(() => (tab('order').length === 2 ? tab('order') : undefined), { timeoutMs: 30_000, message: 'two orders in the order tab' });
  expect(orders.map((r) => [r._uid, r.amount, r.currency])).toEqual([
    ['alice', 42, 'EUR'],
    ['bob', 5, 'EUR'],
  ]);
  const signups = tab('signup');
  expect(signups).toHaveLength(1);
  expect(signups[0]).toMatchObject({ _uid: 'alice', _event: 'signup', plan: 'pro' });
  // Only the kept columns after the reserved ones: no email, no utm_source, no address.
  const header = sheets.values(spreadsheetId, 'order')[0] as string[];
  expect(header.filter((h) => !h.startsWith('_'))).toEqual(['amount', 'currency']);
  expect((sheets.values(spreadsheetId, 'signup')[0] as string[]).filter((h) => !h.startsWith('_'))).toEqual(['plan']);
  const titles = sheets.spreadsheets.get(spreadsheetId)!.sheets.map((s) => s.title);
  expect(titles).not.toContain('page_view');
  expect(titles).not.toContain('click');
  // Users are not events: the filter kept them out.
  expect(tab('users')).toEqual([]);
});

test('BigQuery gets no e-mail, flattened addresses, and events only from a total of 10', async () => {
  const query = async (sql: string) => {
    try {
      const [rows] = await readerClient(bigquery).query({ query: sql });
      return rows as Array<Record<string, unknown>>;
    } catch {
      return undefined;
    }
  };
  const events = await waitFor(async () => {
    const rows = await query(`SELECT _event, _uid, total, address_city, address_zip FROM \`${PROJECT}.${dataset}.events\``);
    return rows?.length === 1 ? rows : undefined;
  }, { timeoutMs: 30_000, message: 'one event in BigQuery' });
  expect(events[0]).toMatchObject({ _event: 'order', _uid: 'alice', total: 42, address_city: 'Lyon', address_zip: '69001' });
  const users = await waitFor(async () => {
    const rows = await query(`SELECT _uid, plan, address_city FROM \`${PROJECT}.${dataset}.users\``);
    return rows?.length === 1 ? rows : undefined;
  }, { timeoutMs: 30_000, message: 'alice in BigQuery' });
  expect(users[0]).toMatchObject({ _uid: 'alice', plan: 'pro', address_city: 'Lyon' });
  for (const name of ['events', 'users']) {
    const [meta] = await readerClient(bigquery).dataset(dataset).table(name).getMetadata();
    const names = (meta.schema.fields as Array<{ name: string }>).map((f) => f.name);
    expect(names).not.toContain('email');
    expect(names).not.toContain('address');
  }
});

test('the warehouse without rules still gets every record as accepted', async () => {
  const rows = await waitFor(async () => {
    const r = await localRows(`${api.tracker.id}.duckdb`, 'SELECT _event, email FROM events ORDER BY _event_at, _id');
    return r?.length === 5 ? r : undefined;
  }, { timeoutMs: 30_000, message: 'five events in the warehouse' });
  expect(rows.map((r) => r[0])).toEqual(['page_view', 'signup', 'order', 'order', 'click']);
  expect(await localRows(`${api.tracker.id}.duckdb`, 'SELECT _uid, email FROM users')).toEqual([['alice', 'alice@example.com']]);
});

test('a filter that fails on some records counts them, and delivers the others', async () => {
  const rows = await waitFor(async () => {
    const r = await localRows('strict.duckdb', 'SELECT _event, total FROM events');
    return r?.length === 1 ? r : undefined;
  }, { timeoutMs: 30_000, message: 'the big order in the strict warehouse' });
  // BIGINT in JSON form is text.
  expect(rows).toEqual([['order', '42']]);
  const view = await waitFor(async () => (await admin.listWithStatus(api.tracker.id)).find((d) => d.id === 'strict' && d.status.delivered === 1));
  // The user, page_view, signup and click have no total; the small order is filtered.
  expect(view.status.skipped).toEqual({ filter: 1, sample: 0, filterErrors: 4 });
  expect(view.status.lastFilterError).toBe('Unknown variable: total');
  expect(view.status.queued).toBe(0);
  expect(view.status.deadLettered).toBe(0);
  const metrics = (await api.http.get('/metrics')).text;
  const line = (reason: string) => `tributary_destination_records_skipped_total{tracker="${api.tracker.id}",destination="strict",type="local",reason="${reason}"}`;
  expect(metrics).toContain(`${line('filter')} 1`);
  expect(metrics).toContain(`${line('filter_error')} 4`);
  expect(metrics).toContain(`tributary_destination_records_delivered_total{tracker="${api.tracker.id}",destination="strict",type="local"} 1`);
  // The console's picture of the destination counts them in their minute.
  const picture = await admin.traffic(api.tracker.id, 'strict');
  expect(picture.totals).toMatchObject({ delivered: 1, skipped: 1, filterErrors: 4 });
});

test('a rule change applies to the records routed a second after it, in every process', async () => {
  await destinations.update(api.tracker.id, 'strict', { rules: { filter: "_event == 'click'", rename: { target: 'button' } } });
  // The contract: every process sees a change within a second (pub/sub drops their caches at once).
  await new Promise((r) => setTimeout(r, 1000));
  await send('/v3/event', [
    { _event: 'order', _uid: 'carol', total: 99 },
    { _event: 'click', _uid: 'carol', target: 'pay' },
  ]);
  const rows = await waitFor(async () => {
    const r = await localRows('strict.duckdb', "SELECT _event, _uid, button FROM events WHERE _uid = 'carol'");
    return r?.length ? r : undefined;
  }, { timeoutMs: 30_000, message: "carol's click in the strict warehouse" });
  expect(rows).toEqual([['click', 'carol', 'pay']]);
  const view = await waitFor(async () => (await admin.listWithStatus(api.tracker.id)).find((d) => d.id === 'strict' && d.status.skipped.filter === 2));
  expect(view.rules).toEqual({ filter: "_event == 'click'", rename: { target: 'button' } });
});
