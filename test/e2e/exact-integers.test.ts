import { createHmac, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { BigQueryInt } from '@google-cloud/bigquery';
import { bigqueryConnector } from '../../connectors/bigquery';
import { googleSheetsConnector } from '../../connectors/google-sheets';
import { localConnector, queryWarehouse } from '../../connectors/local';
import { ConnectorRegistry } from '../../connectors/registry';
import type { Connector } from '../../connectors/types';
import { startWorkerRuntime, type WorkerRuntime } from '../../jobs/worker-runtime';
import { parseExactJson } from '../../src/core/records/exact-json';
import { createLogger } from '../../src/core/logger';
import { SourceService } from '../../src/operator/source-service';
import { startBigQueryFake, type BigQueryFake } from '../fakes/bigquery';
import { SheetsFake } from '../fakes/sheets';
import { PROJECT, readerClient, uniqueDataset } from '../connectors/bigquery/helpers';
import { rowsOf } from '../connectors/google-sheets/harness';
import { startTestApi, type TestApi } from '../helpers/api';
import { listen } from '../helpers/raw-http';
import { TEST_REDIS_URL } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

// The BigQuery client's transport on Node's fetch under jest: see test/fakes/bigquery/jest-transport.ts.
jest.mock('teeny-request', () => jest.requireActual<typeof import('../fakes/bigquery/jest-transport')>('../fakes/bigquery/jest-transport').teenyRequestOnNativeFetch());
jest.setTimeout(60_000);

/**
 * 18- and 20-digit integers, positive and negative, nested, in arrays and as `_uid`, sent by every
 * way in (POST JSON, gzip, `data=` base64, GET parameters, an array, a webhook), read back with
 * every digit from the local warehouse, the BigQuery fake and the Sheets fake.
 */
const ID18 = '603851970716743426';
const NEG18 = '-603851970716743426';
const ID20 = '12345678901234567890';
const NEG20 = '-98765432109876543210';
/** A record's properties as JSON text with the numbers bare, as a client sends them. */
const BODY = `"id":${ID18},"neg":${NEG18},"wide":${ID20},"wneg":${NEG20},"nested":{"ids":[${ID18},${NEG20}],"deep":{"n":${NEG18}}},"small":42`;
const PROPERTIES = { id: BigInt(ID18), neg: BigInt(NEG18), wide: BigInt(ID20), wneg: BigInt(NEG20), nested: { ids: [BigInt(ID18), BigInt(NEG20)], deep: { n: BigInt(NEG18) } }, small: 42 };
const SHOPIFY = `{"id":820982911946154508,"customer":{"id":${ID18}},"line_items":[{"id":466157049,"product_id":${ID20}}]}`;
const SHOPIFY_SECRET = 'shopify-client-secret';

const FAST = { discoverIntervalMs: 50, leaseMs: 5000, delivery: { backoff: { baseMs: 10, maxMs: 100 }, maxRecordAttempts: 20, configRecheckMs: 200, pollMs: 100, writeTimeoutMs: 30_000 } };
const dataDir = mkdtempSync(path.join(tmpdir(), 'tributary-exact-'));
const dataset = uniqueDataset('exact');
let bigquery: BigQueryFake;
let sheets: SheetsFake;
let spreadsheetId: string;
let api: TestApi;
let worker: WorkerRuntime;

beforeAll(async () => {
  bigquery = await startBigQueryFake();
  sheets = await SheetsFake.start();
  spreadsheetId = sheets.createSpreadsheet('Exact', ['Sheet1']).id;
  api = await startTestApi(
    { DATA_DIR: dataDir },
    {
      destinations: [
        { id: 'wh', type: 'local', enabled: true, settings: {} },
        { id: 'bq', type: 'bigquery', enabled: true, settings: { projectId: PROJECT, dataset, endpoint: bigquery.url } },
        { id: 'sheets', type: 'google-sheets', enabled: true, settings: { spreadsheetId, endpoint: sheets.url, rollover: 'none' } },
      ],
    },
  );
  await new SourceService(api.runtime.store).add(api.tracker.id, { type: 'shopify', secret: SHOPIFY_SECRET });
  const connectors = new ConnectorRegistry([localConnector, bigqueryConnector, googleSheetsConnector] as Connector[]);
  worker = await startWorkerRuntime(api.config, TEST_REDIS_URL, connectors, createLogger('silent'), FAST);
});
afterAll(async () => {
  await worker.close();
  await api.close();
  await bigquery.close();
  await sheets.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const json = () => api.http.post('/v3/event').set('Authorization', `Tracker ${api.token}`).set('Content-Type', 'application/json');

/** Sends one way each; answers 2xx. */
async function sendEveryWay(): Promise<void> {
  expect((await json().send(`{"_event":"post","_uid":${ID18},${BODY}}`)).status).toBe(202);
  // supertest would serialize a Buffer as JSON: the compressed bytes go through a plain HTTP request.
  const raw = await listen(api.runtime.app);
  const gz = gzipSync(Buffer.from(`{"_event":"gzip","_uid":${NEG18},${BODY}}`));
  const gzipped = await raw.request({ method: 'POST', path: '/v3/event', headers: { authorization: `Tracker ${api.token}`, 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: gz });
  await raw.close();
  expect(gzipped.status).toBe(202);
  const data = Buffer.from(`{"_event":"base64","_uid":${ID20},${BODY}}`).toString('base64url');
  expect((await api.http.get(`/v3/event?_token=${api.token}&data=${data}`)).status).toBe(202);
  expect((await api.http.get(`/v3/event?_token=${api.token}&_event=get&_uid=${NEG20}&gid=${ID18}`)).status).toBe(202);
  expect((await json().send(`[{"_event":"array","_uid":${NEG20},${BODY}},{"_event":"array2","_uid":"plain",${BODY}}]`)).status).toBe(202);
  const signature = createHmac('sha256', SHOPIFY_SECRET).update(SHOPIFY).digest('base64');
  const hook = await api.http
    .post(`/v3/webhooks/${api.tracker.id}/shopify`)
    .set({ 'Content-Type': 'application/json', 'X-Shopify-Topic': 'orders/create', 'X-Shopify-Webhook-Id': randomUUID(), 'X-Shopify-Hmac-Sha256': signature })
    .send(SHOPIFY);
  expect(hook.status).toBe(200);
}

const EXPECTED_UIDS: Record<string, string> = { post: ID18, gzip: NEG18, base64: ID20, get: NEG20, array: NEG20, array2: 'plain', 'shopify.orders/create': ID18 };
const WITH_BODY = ['post', 'gzip', 'base64', 'array', 'array2'];

beforeAll(sendEveryWay);

test('the local warehouse: BIGINT, HUGEINT and _properties with every digit', async () => {
  const file = path.join(dataDir, 'warehouse', `${api.tracker.id}.duckdb`);
  const rows = await waitFor(
    async () => {
      try {
        const r = await queryWarehouse(file, 'SELECT _event, _uid, id::VARCHAR, neg::VARCHAR, wide::VARCHAR, wneg::VARCHAR, nested, _properties FROM events ORDER BY _event');
        return r.rows.length === 7 ? r.rows : undefined;
      } catch {
        return undefined;
      }
    },
    { timeoutMs: 30_000, intervalMs: 100, message: 'seven events in the warehouse' },
  );
  const byEvent = new Map(rows.map((r) => [String(r[0]), r]));
  for (const [event, uid] of Object.entries(EXPECTED_UIDS)) expect(byEvent.get(event)?.[1]).toBe(uid);
  for (const event of WITH_BODY) {
    const [, , id, neg, wide, wneg, nested, properties] = byEvent.get(event)!;
    expect([id, neg, wide, wneg]).toEqual([ID18, NEG18, ID20, NEG20]);
    expect(parseExactJson(nested as string)).toEqual(PROPERTIES.nested);
    expect(parseExactJson(properties as string)).toEqual(PROPERTIES);
  }
  expect(parseExactJson(byEvent.get('get')![7] as string)).toEqual({ gid: ID18 });
  const hook = parseExactJson(byEvent.get('shopify.orders/create')![7] as string);
  expect(hook).toEqual(parseExactJson(SHOPIFY));
  expect(byEvent.get('shopify.orders/create')![2]).toBe('820982911946154508');
});

test('BigQuery: INT64 and BIGNUMERIC with every digit; _properties exact (a number beyond 64 bits as a string)', async () => {
  const read = async () => {
    const [rows] = await readerClient(bigquery).query({ query: `SELECT _event, _uid, id, neg, wide, wneg, _properties FROM \`${PROJECT}.${dataset}.events\``, wrapIntegers: true });
    return rows as Array<Record<string, unknown>>;
  };
  const rows = await waitFor(
    async () => {
      try {
        const r = await read();
        return r.length === 7 ? r : undefined;
      } catch {
        return undefined;
      }
    },
    { timeoutMs: 30_000, intervalMs: 100, message: 'seven events in BigQuery' },
  );
  const text = (v: unknown) => (v === null ? null : typeof v === 'object' && 'value' in (v as object) ? (v as BigQueryInt).value : (v as { toFixed: () => string }).toFixed());
  const byEvent = new Map(rows.map((r) => [String(r._event), r]));
  for (const [event, uid] of Object.entries(EXPECTED_UIDS)) expect(byEvent.get(event)?._uid).toBe(uid);
  for (const event of WITH_BODY) {
    const row = byEvent.get(event)!;
    expect([row.id, row.neg, row.wide, row.wneg].map(text)).toEqual([ID18, NEG18, ID20, NEG20]);
    expect(parseExactJson(row._properties as string)).toEqual({ ...PROPERTIES, wneg: NEG20, nested: { ids: [BigInt(ID18), NEG20], deep: { n: BigInt(NEG18) } } });
  }
  expect(text(byEvent.get('shopify.orders/create')!.id)).toBe('820982911946154508');
  expect(parseExactJson(byEvent.get('shopify.orders/create')!._properties as string)).toEqual(parseExactJson(SHOPIFY));
});

test('Google Sheets: text cells with every digit, never a rounded number', async () => {
  const tab = () => {
    try {
      return rowsOf(sheets.values(spreadsheetId, 'events'));
    } catch {
      return [];
    }
  };
  const rows = await waitFor(() => (tab().length === 7 ? tab() : undefined), { timeoutMs: 30_000, intervalMs: 100, message: 'seven rows in the sheet' });
  const byEvent = new Map(rows.map((r) => [String(r._event), r]));
  for (const [event, uid] of Object.entries(EXPECTED_UIDS)) expect(byEvent.get(event)?._uid).toBe(uid);
  for (const event of WITH_BODY) {
    const row = byEvent.get(event)!;
    expect([row.id, row.neg, row.wide, row.wneg, row.small]).toEqual([ID18, NEG18, ID20, NEG20, 42]);
    expect(parseExactJson(row.nested as string)).toEqual(PROPERTIES.nested);
  }
  expect(byEvent.get('get')!.gid).toBe(ID18);
  expect(byEvent.get('shopify.orders/create')).toMatchObject({ id: '820982911946154508', customer: `{"id":${ID18}}`, line_items: `[{"id":466157049,"product_id":${ID20}}]` });
});
