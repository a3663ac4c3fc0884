import { ServiceAccounts } from '../service-accounts';
import { keepIdleConnectionsAsGoogle } from '../keep-alive';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApi, type ApiStats, type Call } from './api';
import { Catalog, type FakeTable } from './catalog';
import { Engine, tableRef } from './engine';
import { errorBody, FakeApiError } from './errors';
import { Faults } from './faults';
import { payloadTooLarge } from './insert-all';
import { parseMultipart } from './load';
import { parseExactJson } from '../../../src/core/records/exact-json';

export interface BigQueryFakeOptions {
  /** Table metadata updates allowed per table per window. Default Google's: 5 per 10 s. */
  tableUpdateLimit?: { count: number; windowMs: number };
  /** insertAll refuses a column added by tables.patch, and checks a changed one against its old type, for this long. Default 0. */
  schemaPropagationMs?: number;
  /** insertIds are remembered this long. Default 60 000 ms ("at least one minute"). */
  dedupWindowMs?: number;
  /** DML is refused on a table that received streamed rows this recently. Default 30 minutes. */
  streamingBufferMs?: number;
  /** Extra time each DML statement holds its table. Default 0. */
  dmlLatencyMs?: number;
  /** Largest request body. Default 10 MiB, BigQuery's limit for insertAll and for API requests. */
  maxRequestBytes?: number;
  /** Largest media upload (a load job's data). Default 1 GiB (Google's is far larger). */
  maxUploadBytes?: number;
  /** Load jobs a table takes per UTC day. Default Google's: 1 500. */
  loadJobsPerTablePerDay?: number;
  /** Every query answers this late (BigQuery's answer in 0.5–2 s). Default 0. */
  queryLatencyMs?: number;
  /** A load job runs this long: jobs.get says RUNNING until then. Default 0. */
  loadJobMs?: number;
  now?: () => number;
}

export interface BigQueryFake {
  /** The API root to give the client as `apiEndpoint` (the connector's `endpoint` setting). */
  url: string;
  /** Calls per REST method (`tabledata.insertAll`, `jobs.query`, `tables.patch`…), faulted ones included. */
  calls: Record<string, number>;
  stats: ApiStats;
  faults: Faults;
  /** Service accounts and their keys: a bearer token that is a JWT must be signed by one of them, with the BigQuery scope. */
  accounts: ServiceAccounts;
  /** Table metadata as tables.get returns it, or undefined. */
  table(projectId: string, datasetId: string, tableId: string): FakeTable | undefined;
  /** A table's rows read straight from storage, as DuckDB's JSON values, ordered by `orderBy`. */
  rows(projectId: string, datasetId: string, tableId: string, orderBy?: string): Promise<Array<Record<string, unknown>>>;
  resetCounters(): void;
  close(): Promise<void>;
}

/** A scope that lets a token use BigQuery (https://cloud.google.com/bigquery/docs/authorization). */
const BIGQUERY_SCOPE = 'https://www.googleapis.com/auth/bigquery';

const P = '/bigquery/v2/projects/([^/]+)';
const ROUTES: Array<[string, RegExp, string, string[]]> = [
  ['GET', new RegExp(`^${P}/datasets/([^/]+)$`), 'datasets.get', ['projectId', 'datasetId']],
  ['DELETE', new RegExp(`^${P}/datasets/([^/]+)$`), 'datasets.delete', ['projectId', 'datasetId']],
  ['POST', new RegExp(`^${P}/datasets$`), 'datasets.insert', ['projectId']],
  ['GET', new RegExp(`^${P}/datasets/([^/]+)/tables/([^/]+)$`), 'tables.get', ['projectId', 'datasetId', 'tableId']],
  ['PATCH', new RegExp(`^${P}/datasets/([^/]+)/tables/([^/]+)$`), 'tables.patch', ['projectId', 'datasetId', 'tableId']],
  ['PUT', new RegExp(`^${P}/datasets/([^/]+)/tables/([^/]+)$`), 'tables.update', ['projectId', 'datasetId', 'tableId']],
  ['DELETE', new RegExp(`^${P}/datasets/([^/]+)/tables/([^/]+)$`), 'tables.delete', ['projectId', 'datasetId', 'tableId']],
  ['POST', new RegExp(`^${P}/datasets/([^/]+)/tables$`), 'tables.insert', ['projectId', 'datasetId']],
  ['POST', new RegExp(`^${P}/datasets/([^/]+)/tables/([^/]+)/insertAll$`), 'tabledata.insertAll', ['projectId', 'datasetId', 'tableId']],
  ['POST', new RegExp(`^${P}/queries$`), 'jobs.query', ['projectId']],
  ['GET', new RegExp(`^${P}/queries/([^/]+)$`), 'jobs.getQueryResults', ['projectId', 'jobId']],
  ['POST', new RegExp(`^${P}/jobs$`), 'jobs.insert', ['projectId']],
  ['GET', new RegExp(`^${P}/jobs/([^/]+)$`), 'jobs.get', ['projectId', 'jobId']],
  // A load job with its data (https://cloud.google.com/bigquery/docs/reference/rest/v2/jobs/insert, "Upload URI").
  ['POST', /^\/upload\/bigquery\/v2\/projects\/([^/]+)\/jobs$/, 'jobs.insert', ['projectId']],
];

async function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too-large'> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size <= limit) chunks.push(chunk as Buffer);
  }
  return size > limit ? 'too-large' : Buffer.concat(chunks);
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.destroyed) return;
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=UTF-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * A stateful BigQuery v2 on 127.0.0.1 for the real `@google-cloud/bigquery` client: datasets,
 * tables with schema, partitioning and clustering, tabledata.insertAll, and query jobs run on an
 * embedded DuckDB. See the README of test/fakes/bigquery in index.ts for what it enforces.
 */
export async function startBigQueryFake(options: BigQueryFakeOptions = {}): Promise<BigQueryFake> {
  const now = options.now ?? Date.now;
  const engine = await Engine.create();
  await engine.use(async (c) => {
    await c.run(`CREATE MACRO bq_timestamp(x) AS CAST(x AS TIMESTAMPTZ)`);
    await c.run(`CREATE MACRO bq_to_json_string(x) AS CAST(to_json(x) AS VARCHAR)`);
  });
  const catalog = new Catalog(engine, { tableUpdateLimit: options.tableUpdateLimit ?? { count: 5, windowMs: 10_000 }, schemaPropagationMs: options.schemaPropagationMs ?? 0, now });
  const stats: ApiStats = { rowsInserted: 0, rowsDeduplicated: 0, loadJobs: 0, rowsLoaded: 0, statements: {}, dmlByTable: {}, sql: [], authorizedRequests: 0 };
  const api = createApi(catalog, { dedupWindowMs: options.dedupWindowMs ?? 60_000, streamingBufferMs: options.streamingBufferMs ?? 30 * 60_000, dmlLatencyMs: options.dmlLatencyMs ?? 0, loadJobsPerTablePerDay: options.loadJobsPerTablePerDay ?? 1500, queryLatencyMs: options.queryLatencyMs ?? 0, loadJobMs: options.loadJobMs ?? 0, now }, stats);
  const faults = new Faults();
  const accounts = new ServiceAccounts();
  const calls: Record<string, number> = {};
  const maxBytes = options.maxRequestBytes ?? 10 * 1024 * 1024;
  const maxUploadBytes = options.maxUploadBytes ?? 1024 * 1024 * 1024;

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const route = ROUTES.find(([m, re]) => m === req.method && re.test(url.pathname));
    if (!route) return send(res, 404, errorBody(new FakeApiError(404, 'notFound', `Not found: ${req.method} ${url.pathname}`)));
    const [, re, method, names] = route;
    const match = re.exec(url.pathname)!;
    const path = Object.fromEntries(names.map((n, i) => [n, decodeURIComponent(match[i + 1]!)]));
    calls[method] = (calls[method] ?? 0) + 1;
    if (req.headers.authorization) stats.authorizedRequests++;
    const bearer = req.headers.authorization?.startsWith('Bearer ') ? req.headers.authorization.slice(7) : undefined;
    if (bearer && ServiceAccounts.isJwt(bearer) && 'refused' in accounts.verify(bearer, BIGQUERY_SCOPE, now())) {
      return send(res, 401, errorBody(new FakeApiError(401, 'authError', 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.')));
    }
    const upload = url.pathname.startsWith('/upload/');
    if (upload && url.searchParams.get('uploadType') !== 'multipart') return send(res, 400, errorBody(new FakeApiError(400, 'invalid', `This fake takes media uploads with uploadType=multipart only (got ${url.searchParams.get('uploadType') ?? 'none'}).`)));
    const limit = upload ? maxUploadBytes : maxBytes;
    const raw = await readBody(req, limit);
    if (raw === 'too-large') return send(res, 400, errorBody(payloadTooLarge(limit)));
    let body: Record<string, unknown> = {};
    let media: Buffer | undefined;
    try {
      const [metadata, data] = upload ? parseMultipart(req.headers['content-type'], raw) : [raw, undefined];
      media = data;
      // Google reads JSON numbers exactly (a 64-bit integer sent as a bare number keeps its digits); only a JavaScript client rounds them.
      body = metadata!.length > 0 ? (parseExactJson(metadata!.toString('utf8')) as Record<string, unknown>) : {};
    } catch (err) {
      if (err instanceof FakeApiError) return send(res, err.status, errorBody(err));
      return send(res, 400, errorBody(new FakeApiError(400, 'parseError', 'Parse Error')));
    }
    const call: Call = { path, query: url.searchParams, body, ...(media ? { media } : {}) };
    await catalog.sweepExpired();
    const fault = faults.take({ method, path, body });
    if (fault?.kind === 'error') return send(res, fault.status, errorBody(new FakeApiError(fault.status, fault.reason, fault.message ?? `Injected ${fault.reason}`)));
    if (fault?.kind === 'hang') return;
    if (fault?.kind === 'delay') await new Promise((r) => setTimeout(r, fault.ms));
    let status = 200;
    let answer: unknown;
    try {
      answer = await api[method]!(call);
      if (answer === undefined) status = 204;
    } catch (err) {
      const e = err instanceof FakeApiError ? err : new FakeApiError(500, 'internalError', `fake failure: ${(err as Error).message}`);
      status = e.status;
      answer = errorBody(e);
    }
    if (fault?.kind === 'incomplete' && status === 200) {
      const { kind, jobReference } = answer as { kind: string; jobReference: unknown };
      answer = { kind, jobReference, jobComplete: false };
    }
    if (fault?.kind === 'lose-response') {
      req.socket.destroy();
      return;
    }
    send(res, status, answer);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => send(res, 500, errorBody(new FakeApiError(500, 'internalError', String(err)))));
  });
  keepIdleConnectionsAsGoogle(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    stats,
    faults,
    accounts,
    table: (p, d, t) => (catalog.hasDataset(p, d) ? catalog.dataset(p, d).tables.get(t) : undefined),
    async rows(p, d, t, orderBy) {
      const reader = await engine.use((c) => c.runAndReadAll(`SELECT * FROM ${tableRef(p, d, t)}${orderBy ? ` ORDER BY ${orderBy}` : ''}`));
      return reader.getRowObjectsJson() as Array<Record<string, unknown>>;
    },
    resetCounters() {
      for (const k of Object.keys(calls)) delete calls[k];
      Object.assign(stats, { rowsInserted: 0, rowsDeduplicated: 0, loadJobs: 0, rowsLoaded: 0, statements: {}, dmlByTable: {}, sql: [], authorizedRequests: 0 });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await engine.use(async () => engine.close());
    },
  };
}
