import { randomUUID } from 'node:crypto';
import type { Catalog, FakeDataset, FakeTable } from './catalog';
import { tableRef } from './engine';
import { FakeApiError, invalid, notFound } from './errors';
import { insertAll, type InsertAllOptions, type InsertAllStats } from './insert-all';
import { LoadQuota, loadDestination, runLoad, type LoadJobConfig, type LoadOptions, type LoadOutcome } from './load';
import { runQuery, type QueryOptions, type QueryRequest, type QueryResult } from './query';

/** One routed call: its path parameters, query string and JSON body (a media upload's metadata part), and an upload's data. */
export interface Call {
  path: Readonly<Record<string, string>>;
  query: URLSearchParams;
  body: Record<string, unknown>;
  media?: Buffer;
}

export interface ApiStats extends InsertAllStats {
  /** Load jobs created, and the rows they loaded. */
  loadJobs: number;
  rowsLoaded: number;
  /** Statements run by jobs.query / jobs.insert, by kind (`MERGE`, `SELECT`…). */
  statements: Record<string, number>;
  /** DML statements per target table (`project:dataset.table`). */
  dmlByTable: Record<string, number>;
  /** Every statement's text, in order. */
  sql: string[];
  /** Requests that carried an Authorization header (a custom endpoint without credentials sends none). */
  authorizedRequests: number;
}

type Job = {
  projectId: string;
  jobId: string;
  location: string;
  created: number;
  /** A query job's statement and result. */
  query?: QueryRequest;
  result?: QueryResult;
  /** A load job's configuration and what it did. */
  load?: { config: LoadJobConfig; outcome: LoadOutcome };
  error?: FakeApiError;
};

const ms = (t: number) => String(t);

function datasetResource(ds: FakeDataset) {
  return {
    kind: 'bigquery#dataset',
    etag: `"${ds.creationTime}"`,
    id: `${ds.projectId}:${ds.datasetId}`,
    datasetReference: { projectId: ds.projectId, datasetId: ds.datasetId },
    location: ds.location,
    creationTime: ms(ds.creationTime),
    lastModifiedTime: ms(ds.creationTime),
    type: 'DEFAULT',
  };
}

async function tableResource(catalog: Catalog, t: FakeTable, location: string, streamingBufferMs: number, now: number) {
  const count = await catalog.engine.use((c) => c.runAndReadAll(`SELECT count(*) FROM ${tableRef(t.projectId, t.datasetId, t.tableId)}`));
  const numRows = String(count.getRows()[0]?.[0] ?? 0);
  return {
    kind: 'bigquery#table',
    etag: `"${t.lastModifiedTime}"`,
    id: `${t.projectId}:${t.datasetId}.${t.tableId}`,
    tableReference: { projectId: t.projectId, datasetId: t.datasetId, tableId: t.tableId },
    schema: { fields: t.fields },
    ...(t.timePartitioning ? { timePartitioning: t.timePartitioning } : {}),
    ...(t.clustering ? { clustering: t.clustering } : {}),
    numRows,
    ...(t.expirationTime !== undefined ? { expirationTime: ms(t.expirationTime) } : {}),
    creationTime: ms(t.creationTime),
    lastModifiedTime: ms(t.lastModifiedTime),
    type: 'TABLE',
    location,
    ...(t.lastStreamedAt !== undefined && now - t.lastStreamedAt < streamingBufferMs ? { streamingBuffer: { oldestEntryTime: ms(t.lastStreamedAt) } } : {}),
  };
}

function queryResponse(kind: string, job: Job, result: QueryResult) {
  return {
    kind,
    jobReference: { projectId: job.projectId, jobId: job.jobId, location: job.location },
    jobComplete: true,
    cacheHit: false,
    totalBytesProcessed: '0',
    ...(result.schema ? { schema: result.schema, rows: result.rows, totalRows: String(result.rows?.length ?? 0) } : {}),
    ...(result.numDmlAffectedRows !== undefined ? { numDmlAffectedRows: String(result.numDmlAffectedRows) } : {}),
  };
}

/**
 * A job as jobs.insert and jobs.get answer it. A load job is reported RUNNING by the call that
 * created it, as BigQuery does (its rows are loaded by then, which a client cannot tell), and DONE
 * from its first jobs.get: a client has to poll, as it must with BigQuery.
 */
function jobResource(job: Job, running = false) {
  const loadError = job.load?.outcome.error;
  const failed = job.error
    ? { errorResult: { reason: job.error.reason, message: job.error.message }, errors: [{ reason: job.error.reason, message: job.error.message }] }
    : loadError
      ? { errorResult: loadError.result, errors: loadError.errors }
      : {};
  const times = { creationTime: ms(job.created), startTime: ms(job.created), ...(running ? {} : { endTime: ms(job.created) }) };
  const configuration = job.load ? { jobType: 'LOAD', load: job.load.config } : { jobType: 'QUERY', query: { query: job.query?.query, useLegacySql: false } };
  const statistics = job.load
    ? { ...times, load: job.load.outcome.statistics }
    : { ...times, query: { statementType: job.result?.statementType, ...(job.result?.numDmlAffectedRows !== undefined ? { numDmlAffectedRows: String(job.result.numDmlAffectedRows) } : {}) } };
  return {
    kind: 'bigquery#job',
    id: `${job.projectId}:${job.location}.${job.jobId}`,
    jobReference: { projectId: job.projectId, jobId: job.jobId, location: job.location },
    configuration,
    status: running ? { state: 'RUNNING' } : { state: 'DONE', ...failed },
    statistics,
  };
}

export interface ApiOptions extends InsertAllOptions, QueryOptions, LoadOptions {
  /** How long every query takes before it answers (BigQuery's take 0.5–2 s even for a small statement). Default 0. */
  queryLatencyMs: number;
  /** How long a load job runs: jobs.get reports it RUNNING until then. Default 0 (DONE at the first jobs.get). */
  loadJobMs: number;
}

/** The REST methods of BigQuery v2 that the fake serves, by method id. */
export function createApi(catalog: Catalog, opts: ApiOptions, stats: ApiStats) {
  const jobs = new Map<string, Job>();
  const loadQuota = new LoadQuota();
  const locationOf = (c: Call) => catalog.dataset(c.path.projectId!, c.path.datasetId!).location;
  const table = (c: Call) => catalog.table(c.path.projectId!, c.path.datasetId!, c.path.tableId!);

  const execute = async (job: Job): Promise<QueryResult> => {
    const query = job.query!;
    if (opts.queryLatencyMs > 0) await new Promise((r) => setTimeout(r, opts.queryLatencyMs));
    stats.sql.push(query.query);
    const result = await runQuery(catalog, query, opts);
    for (const r of [result, ...(result.children ?? [])]) {
      stats.statements[r.statementType] = (stats.statements[r.statementType] ?? 0) + 1;
      if (['MERGE', 'INSERT', 'UPDATE', 'DELETE'].includes(r.statementType) && r.tables[0]) {
        const t = r.tables[0];
        const key = `${t.projectId}:${t.datasetId}.${t.tableId}`;
        stats.dmlByTable[key] = (stats.dmlByTable[key] ?? 0) + 1;
      }
    }
    return result;
  };
  const request = (projectId: string, body: Record<string, unknown>, query: URLSearchParams): QueryRequest => {
    const format = body.formatOptions as { useInt64Timestamp?: unknown } | undefined;
    return {
      projectId,
      query: String(body.query ?? ''),
      location: typeof body.location === 'string' ? body.location : undefined,
      queryParameters: Array.isArray(body.queryParameters) ? body.queryParameters : [],
      defaultDataset: body.defaultDataset as QueryRequest['defaultDataset'],
      useLegacySql: body.useLegacySql === true,
      useInt64Timestamp: format?.useInt64Timestamp === true || query.get('formatOptions.useInt64Timestamp') === 'true',
    };
  };
  const newJob = (projectId: string, jobId: string, q: QueryRequest): Job => ({ projectId, jobId, location: q.location ?? 'US', query: q, created: Date.now() });
  const loadJob = async (c: Call) => {
    const config = ((c.body.configuration ?? {}) as { load?: LoadJobConfig }).load;
    if (!config) throw new FakeApiError(400, 'invalid', 'A media upload creates load jobs: configuration.load is required.');
    const ref = (c.body.jobReference ?? {}) as { jobId?: string; location?: string };
    const projectId = c.path.projectId!;
    const jobId = ref.jobId ?? `job_${randomUUID().replace(/-/g, '')}`;
    const location = ref.location ?? 'US';
    if (jobs.has(`${projectId}/${jobId}`)) throw new FakeApiError(409, 'duplicate', `Already Exists: Job ${projectId}:${location}.${jobId}`);
    const table = await loadDestination(catalog, projectId, config);
    if (catalog.dataset(table.projectId, table.datasetId).location.toLowerCase() !== location.toLowerCase()) throw notFound(`Dataset ${table.projectId}:${table.datasetId} was not found in location ${location}`);
    loadQuota.take(`${table.projectId}:${table.datasetId}.${table.tableId}`, opts);
    const job: Job = { projectId, jobId, location, created: Date.now(), load: { config, outcome: await runLoad(catalog, table, config, c.media ?? Buffer.alloc(0)) } };
    stats.loadJobs++;
    stats.rowsLoaded += Number(job.load!.outcome.statistics.outputRows);
    remember(job);
    return jobResource(job, true);
  };
  const remember = (job: Job) => {
    jobs.set(`${job.projectId}/${job.jobId}`, job);
    if (jobs.size > 1000) jobs.delete(jobs.keys().next().value!);
  };
  const findJob = (c: Call): Job => {
    const job = jobs.get(`${c.path.projectId}/${c.path.jobId}`);
    if (!job) throw notFound(`Job ${c.path.projectId}:${c.query.get('location') ?? 'US'}.${c.path.jobId}`);
    return job;
  };

  const handlers: Record<string, (c: Call) => Promise<unknown>> = {
    'datasets.get': async (c) => datasetResource(catalog.dataset(c.path.projectId!, c.path.datasetId!)),
    'datasets.insert': async (c) => datasetResource(await catalog.createDataset(c.path.projectId!, c.body)),
    'datasets.delete': async (c) => {
      await catalog.deleteDataset(c.path.projectId!, c.path.datasetId!, c.query.get('deleteContents') === 'true');
      return undefined;
    },
    'tables.get': async (c) => tableResource(catalog, table(c), locationOf(c), opts.streamingBufferMs, opts.now()),
    'tables.insert': async (c) => tableResource(catalog, await catalog.createTable(c.path.projectId!, c.path.datasetId!, c.body), locationOf(c), opts.streamingBufferMs, opts.now()),
    'tables.patch': async (c) => tableResource(catalog, await catalog.patchTable(c.path.projectId!, c.path.datasetId!, c.path.tableId!, c.body), locationOf(c), opts.streamingBufferMs, opts.now()),
    'tables.update': async (c) => tableResource(catalog, await catalog.patchTable(c.path.projectId!, c.path.datasetId!, c.path.tableId!, c.body), locationOf(c), opts.streamingBufferMs, opts.now()),
    'tables.delete': async (c) => {
      await catalog.deleteTable(c.path.projectId!, c.path.datasetId!, c.path.tableId!);
      return undefined;
    },
    'tabledata.insertAll': async (c) => insertAll(catalog, { projectId: c.path.projectId!, datasetId: c.path.datasetId!, tableId: c.path.tableId! }, c.body, opts, stats),
    'jobs.query': async (c) => {
      const job = newJob(c.path.projectId!, `job_${randomUUID().replace(/-/g, '')}`, request(c.path.projectId!, c.body, c.query));
      job.result = await execute(job);
      remember(job);
      return queryResponse('bigquery#queryResponse', job, job.result);
    },
    'jobs.insert': async (c) => {
      if (c.media !== undefined) return loadJob(c);
      const config = ((c.body.configuration ?? {}) as { query?: Record<string, unknown> }).query;
      const ref = (c.body.jobReference ?? {}) as { jobId?: string; location?: string };
      if (!config) throw new FakeApiError(400, 'invalid', 'This fake runs query jobs only.');
      const q = request(c.path.projectId!, { ...config, location: ref.location ?? config.location }, c.query);
      const job = newJob(c.path.projectId!, ref.jobId ?? `job_${randomUUID().replace(/-/g, '')}`, q);
      if (jobs.has(`${job.projectId}/${job.jobId}`)) throw new FakeApiError(409, 'duplicate', `Already Exists: Job ${job.projectId}:${job.location}.${job.jobId}`);
      remember(job);
      try {
        job.result = await execute(job);
      } catch (err) {
        if (!(err instanceof FakeApiError)) throw err;
        job.error = err;
      }
      return jobResource(job);
    },
    'jobs.get': async (c) => {
      const job = findJob(c);
      return jobResource(job, job.load !== undefined && Date.now() < job.created + opts.loadJobMs);
    },
    'jobs.getQueryResults': async (c) => {
      const job = findJob(c);
      if (job.error) throw job.error;
      if (!job.result) throw invalid(`Job ${job.projectId}:${job.location}.${job.jobId} is not a query job.`);
      return queryResponse('bigquery#getQueryResultsResponse', job, job.result!);
    },
  };
  return handlers;
}
