import { Readable } from 'node:stream';
import { BigQuery, type BigQueryOptions } from '@google-cloud/bigquery';
import { JWT, PassThroughClient } from 'google-auth-library';
import { withDeadline } from '../../src/core/deadline';
import { RetryableError } from '../errors';
import { writeStopped } from '../shared/write-guard';
import type { ResolvedSettings } from './config';
import { toConnectorError, type CallContext } from './errors';
import { keyFileEmail, readKeyFile } from '../shared/key-file';
import { Opaque } from './opaque';
import { rowObjects, type QueryParameter, type QueryResponse } from './query-params';

/** A column as tables.get / tables.patch carry it. */
export interface FieldSchema {
  name: string;
  type: string;
  mode?: string;
  description?: string;
}

export interface TableSpec {
  fields: FieldSchema[];
  timePartitioning?: { type: string; field: string };
  clustering?: { fields: string[] };
}

/** One insertAll row, sent as is (`raw: true`): `insertId` is the record id, so a re-send is deduplicated. */
export interface InsertRow {
  insertId: string;
  json: Record<string, unknown>;
}

/** A job as jobs.insert and jobs.get answer it: enough to follow a load job. */
export interface JobStatus {
  jobReference?: { jobId?: string; location?: string };
  status?: { state?: string; errorResult?: { reason?: string; message?: string }; errors?: Array<{ reason?: string; message?: string }> };
  statistics?: { load?: { outputRows?: string } };
}

export interface RowErrors {
  index: number;
  errors: Array<{ reason: string; message: string; location: string }>;
}

/**
 * Client options. The library's own retries are off (`autoRetry: false`, `maxRetries: 0`): it
 * would retry 5xx and rate limits on its own schedule, which the delivery plumbing already does with
 * backoff, and a retried insert with random insertIds could double rows. With a custom endpoint and
 * no credentials the `PassThroughClient` sends requests without auth (emulators, local fakes).
 */
export function clientOptions(s: ResolvedSettings): BigQueryOptions {
  const options: BigQueryOptions = { projectId: s.projectId, location: s.location, autoRetry: false, maxRetries: 0 };
  if (s.endpoint) options.apiEndpoint = s.endpoint.replace(/\/+$/, '');
  const key = s.endpoint ? (s.credentials ?? (s.keyFile ? readKeyFile(s.keyFile) : undefined)) : undefined;
  if (key) {
    // As the Sheets connector does (google-sheets/auth.ts): a key signs its own JWT with the BigQuery
    // scope, since an emulator or private endpoint does not stand in for Google's OAuth server.
    const jwt = new JWT({ email: key.client_email, key: key.private_key, keyId: typeof key.private_key_id === 'string' ? key.private_key_id : undefined, scopes: [BIGQUERY_SCOPE] });
    jwt.useJWTAccessWithScope = true;
    options.authClient = jwt;
  } else if (s.credentials) options.credentials = s.credentials;
  else if (s.keyFile) options.keyFilename = s.keyFile;
  else if (s.endpoint) options.authClient = new PassThroughClient();
  return options;
}

/** Read and write BigQuery data, run jobs (https://cloud.google.com/bigquery/docs/authorization). */
const BIGQUERY_SCOPE = 'https://www.googleapis.com/auth/bigquery';

/**
 * Resolves with `promise`, or rejects when `signal` aborts or `timeoutMs` passes. The library's own
 * `timeout` option does not reach its transport (teeny-request 10 on node-fetch 3, which dropped
 * `timeout`), so the limit is kept here; an abandoned request may still land, which every write
 * tolerates (insertId plus a look-up before a re-send, MERGE by key).
 */
function bounded<T>(what: string, signal: AbortSignal, timeoutMs: number, promise: Promise<T>): Promise<T> {
  return withDeadline(
    {
      timeoutMs,
      signal,
      timeoutError: () => new RetryableError(`BigQuery ${what} did not answer within ${timeoutMs} ms`, { reason: 'timeout' }),
      abortError: () => writeStopped(),
    },
    () => promise,
  );
}

/** How long jobs.query and jobs.getQueryResults wait for a statement before answering `jobComplete: false`. */
const QUERY_WAIT_MS = 10_000;

/** The BigQuery calls the connector makes, each turning failures into connector errors. */
export class BigQueryApi {
  private readonly client: BigQuery;
  /** Server-side wait per query call, kept under this destination's time limit per call. */
  private readonly queryWaitMs: number;

  private readonly context: CallContext;

  constructor(private readonly s: ResolvedSettings) {
    this.queryWaitMs = Math.min(QUERY_WAIT_MS, Math.floor(s.requestTimeoutMs / 2));
    this.client = new BigQuery(clientOptions(s));
    const identity = s.credentials?.client_email ?? (s.keyFile ? (keyFileEmail(s.keyFile) ?? `key file ${s.keyFile}`) : s.endpoint ? `anonymous at ${s.endpoint}` : 'application default credentials');
    this.context = { projectId: s.projectId, dataset: s.dataset, identity };
  }

  private async call<T>(what: string, signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
    try {
      return await bounded(what, signal, this.s.requestTimeoutMs, fn());
    } catch (err) {
      throw toConnectorError(err, what, this.context);
    }
  }

  /** datasets.get: the dataset's location. */
  async getDataset(signal: AbortSignal): Promise<{ location: string }> {
    const [meta] = await this.call('datasets.get', signal, () => this.client.dataset(this.s.dataset).getMetadata());
    return { location: String(meta.location ?? '') };
  }

  async createDataset(signal: AbortSignal): Promise<void> {
    await this.call('datasets.insert', signal, () => this.client.createDataset(this.s.dataset, { location: this.s.location }));
  }

  async getTable(table: string, signal: AbortSignal): Promise<TableSpec> {
    const [meta] = await this.call(`tables.get ${table}`, signal, () => this.client.dataset(this.s.dataset).table(table).getMetadata());
    return { fields: ((meta.schema?.fields ?? []) as FieldSchema[]).map(({ name, type, mode, description }) => ({ name, type, mode, description })) };
  }

  /** tables.insert; `expiresAt` (epoch ms) has BigQuery delete the table then, whatever happens to its writer. */
  async createTable(table: string, spec: TableSpec, signal: AbortSignal, expiresAt?: number): Promise<void> {
    const schema = new Opaque({ fields: spec.fields }) as unknown as { fields: FieldSchema[] };
    const expiry = expiresAt === undefined ? {} : { expirationTime: String(expiresAt) };
    await this.call(`tables.insert ${table}`, signal, () => this.client.dataset(this.s.dataset).createTable(table, { schema, timePartitioning: spec.timePartitioning, clustering: spec.clustering, ...expiry }));
  }

  /**
   * A load job of newline-delimited JSON rows into `table`, its data sent with the request (a
   * multipart media upload, as the library's `createWriteStream` sends it, but with an answer this
   * connector waits for under its own deadline). Returns the job as created: usually still running.
   */
  async loadJson(table: string, rows: Buffer, load: { writeDisposition: string }, jobId: string, signal: AbortSignal): Promise<JobStatus> {
    const metadata = {
      jobReference: { projectId: this.s.projectId, jobId, location: this.s.location },
      configuration: { load: { destinationTable: { projectId: this.s.projectId, datasetId: this.s.dataset, tableId: table }, sourceFormat: 'NEWLINE_DELIMITED_JSON', createDisposition: 'CREATE_NEVER', ignoreUnknownValues: false, maxBadRecords: 0, ...load } },
    };
    const uri = `${this.client.apiEndpoint}/upload/bigquery/v2/projects/${encodeURIComponent(this.s.projectId)}/jobs`;
    // teeny-request ends a multipart body after a part that is a stream, not after text.
    const multipart = [
      { 'Content-Type': 'application/json', body: JSON.stringify(metadata) },
      { 'Content-Type': 'application/octet-stream', body: Readable.from([rows]) },
    ];
    return this.call(`load job into ${table}`, signal, () => this.request<JobStatus>({ method: 'POST', uri, qs: { uploadType: 'multipart' }, multipart }));
  }

  /** jobs.get: a job's state. */
  async getJob(jobId: string, signal: AbortSignal): Promise<JobStatus> {
    return this.call('jobs.get', signal, () => this.request<JobStatus>({ uri: `/jobs/${encodeURIComponent(jobId)}`, qs: { location: this.s.location } }));
  }

  /** tables.patch with the full schema: BigQuery adds the columns it does not have yet. */
  async patchSchema(table: string, fields: readonly FieldSchema[], signal: AbortSignal): Promise<void> {
    const schema = new Opaque({ fields }) as unknown as { fields: FieldSchema[] };
    await this.call(`tables.patch ${table}`, signal, () => this.client.dataset(this.s.dataset).table(table).setMetadata({ schema }));
  }

  /**
   * tabledata.insertAll with the rows as given. `skipInvalidRows: false` makes one bad row stop
   * the request (the others come back `stopped` and are re-sent); `partialRetries: 0` stops the
   * library from re-sending failed rows itself. Returns the per-row errors, empty when all landed.
   */
  async insertAll(table: string, rows: readonly InsertRow[], signal: AbortSignal): Promise<RowErrors[]> {
    const what = `tabledata.insertAll ${table}`;
    try {
      const opaque = rows.map((r) => new Opaque(r));
      await bounded(what, signal, this.s.requestTimeoutMs, this.client.dataset(this.s.dataset).table(table).insert(opaque, { raw: true, skipInvalidRows: false, ignoreUnknownValues: false, partialRetries: 0 }));
      return [];
    } catch (err) {
      const partial = (err as { name?: unknown; response?: { insertErrors?: unknown } }).response?.insertErrors;
      if ((err as { name?: unknown }).name === 'PartialFailureError' && Array.isArray(partial)) return partial as RowErrors[];
      throw toConnectorError(err, what, this.context);
    }
  }

  /**
   * jobs.query in the dataset's location, through the library's authenticated request (its
   * `query()` would walk and rewrite parameter values, see opaque.ts); polls jobs.getQueryResults
   * while the statement runs or pages remain. Rows as objects of text values.
   */
  async query(sql: string, params: readonly QueryParameter[], signal: AbortSignal, what = 'query'): Promise<Array<Record<string, string | null>>> {
    const body = { query: sql, useLegacySql: false, location: this.s.location, parameterMode: 'NAMED', queryParameters: params, timeoutMs: this.queryWaitMs, formatOptions: { useInt64Timestamp: true } };
    let page = await this.call(what, signal, () => this.request<QueryResponse>({ method: 'POST', uri: '/queries', json: new Opaque(body) }));
    const rows = [...(page.rows ?? [])];
    while (page.jobComplete !== true || page.pageToken) {
      const jobId = page.jobReference?.jobId;
      if (!jobId) throw new RetryableError(`BigQuery ${what} answered without a job to wait for`, { reason: 'noJob' });
      const qs: Record<string, string | number | boolean> = { location: page.jobReference?.location ?? this.s.location, timeoutMs: this.queryWaitMs, 'formatOptions.useInt64Timestamp': true };
      if (page.pageToken) qs.pageToken = page.pageToken;
      page = await this.call(what, signal, () => this.request<QueryResponse>({ uri: `/queries/${encodeURIComponent(jobId)}`, qs }));
      rows.push(...(page.rows ?? []));
    }
    return rowObjects(page.schema?.fields ?? [], rows);
  }

  private request<T>(opts: { method?: string; uri: string; json?: unknown; qs?: Record<string, unknown>; multipart?: Array<{ body: string | Readable }> }): Promise<T> {
    return new Promise((resolve, reject) => this.client.request(opts, (err, body) => (err ? reject(err) : resolve(body as T))));
  }
}
