import { parseExactJson } from '../../../src/core/records/exact-json';
import type { Catalog, FakeTable } from './catalog';
import { tableRef } from './engine';
import { FakeApiError, invalid, notFound } from './errors';
import { appendRows, convertRow, isRowErrors, type RowError } from './insert-all';
import type { Cell } from './values';

/**
 * Load jobs from a media upload (https://cloud.google.com/bigquery/docs/reference/rest/v2/jobs/insert,
 * `POST /upload/bigquery/v2/projects/{p}/jobs?uploadType=multipart`): a multipart/related body of
 * the job resource (JSON) and the data. The fake loads NEWLINE_DELIMITED_JSON, validating each row
 * as a load does (the schema's fields and types; `ignoreUnknownValues`, `maxBadRecords`), and is
 * atomic as a load is: a job that fails loads nothing. `writeDisposition` WRITE_APPEND (default),
 * WRITE_TRUNCATE and WRITE_EMPTY; `createDisposition` CREATE_IF_NEEDED (default, with a `schema`)
 * and CREATE_NEVER. Google's quota of 1 500 load jobs per table per day is enforced. Loaded rows
 * never enter the streaming buffer, so DML may touch them at once.
 */

export interface LoadJobConfig {
  destinationTable?: { projectId?: string; datasetId?: string; tableId?: string };
  sourceFormat?: string;
  writeDisposition?: string;
  createDisposition?: string;
  schema?: unknown;
  ignoreUnknownValues?: boolean;
  maxBadRecords?: number;
}

export interface LoadStatistics {
  inputFiles: string;
  inputFileBytes: string;
  outputRows: string;
  badRecords: string;
}

export interface LoadOutcome {
  statistics: LoadStatistics;
  /** The job's failure, as `status.errorResult`, with the row errors as `status.errors`. */
  error?: { result: { reason: string; message: string }; errors: Array<{ reason: string; message: string; location?: string }> };
}

export interface LoadOptions {
  /** Load jobs a table takes per UTC day. Google: 1 500. */
  loadJobsPerTablePerDay: number;
  now: () => number;
}

/** The parts of a multipart/related body, in order. */
export function parseMultipart(contentType: string | undefined, body: Buffer): Buffer[] {
  const boundary = /boundary="?([^";]+)"?/i.exec(contentType ?? '')?.[1];
  if (!/^multipart\/related/i.test(contentType ?? '') || !boundary) throw invalid('Media upload expects a multipart/related body with a boundary (uploadType=multipart).');
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: Buffer[] = [];
  let at = body.indexOf(delimiter);
  while (at >= 0) {
    const start = at + delimiter.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    const next = body.indexOf(delimiter, start);
    if (next < 0) break;
    const part = body.subarray(start, next);
    const headerEnd = part.indexOf('\r\n\r\n');
    if (headerEnd < 0) throw invalid('Malformed multipart body: a part has no header.');
    let content = part.subarray(headerEnd + 4);
    if (content.subarray(-2).toString() === '\r\n') content = content.subarray(0, -2);
    parts.push(content);
    at = next;
  }
  if (parts.length !== 2) throw invalid(`A media upload has two parts, the job's metadata and the data; this one has ${parts.length}.`);
  return parts;
}

const dayOf = (ms: number) => Math.floor(ms / 86_400_000);

/** Load jobs per table per day, for the quota. */
export class LoadQuota {
  private readonly counts = new Map<string, number>();

  take(table: string, opts: LoadOptions): void {
    const key = `${table}/${dayOf(opts.now())}`;
    const n = this.counts.get(key) ?? 0;
    if (n >= opts.loadJobsPerTablePerDay) {
      throw new FakeApiError(403, 'quotaExceeded', `Quota exceeded: Your table exceeded quota for imports or query appends per table. For more information, see https://cloud.google.com/bigquery/docs/troubleshoot-quotas`);
    }
    this.counts.set(key, n + 1);
  }
}

/** Checks the configuration and finds (or creates) the destination; errors here refuse the jobs.insert call itself. */
export async function loadDestination(catalog: Catalog, projectId: string, config: LoadJobConfig): Promise<FakeTable> {
  const dest = config.destinationTable ?? {};
  const p = dest.projectId ?? projectId;
  if (!dest.datasetId || !dest.tableId) throw invalid('Required parameter is missing: configuration.load.destinationTable');
  const format = config.sourceFormat ?? 'CSV';
  if (format !== 'NEWLINE_DELIMITED_JSON') throw invalid(`This fake loads NEWLINE_DELIMITED_JSON only, not ${format}.`);
  const write = config.writeDisposition ?? 'WRITE_APPEND';
  if (!['WRITE_APPEND', 'WRITE_TRUNCATE', 'WRITE_EMPTY'].includes(write)) throw invalid(`Invalid value for writeDisposition: ${write}`);
  const create = config.createDisposition ?? 'CREATE_IF_NEEDED';
  if (!['CREATE_IF_NEEDED', 'CREATE_NEVER'].includes(create)) throw invalid(`Invalid value for createDisposition: ${create}`);
  catalog.dataset(p, dest.datasetId);
  if (catalog.dataset(p, dest.datasetId).tables.has(dest.tableId)) return catalog.table(p, dest.datasetId, dest.tableId);
  if (create === 'CREATE_NEVER') throw notFound(`Table ${p}:${dest.datasetId}.${dest.tableId}`);
  if (config.schema === undefined) throw invalid('No schema specified on job or table.');
  return catalog.createTable(p, dest.datasetId, { tableReference: { tableId: dest.tableId }, schema: config.schema });
}

/** A row's error as a load words it: the field named unless the message does. */
const rowMessage = (e: RowError): string => (e.location && !e.message.includes(e.location) ? `${e.message.replace(/\.$/, '')}. Field: ${e.location}` : e.message);

const readError = (message: string): { reason: string; message: string } => ({ reason: 'invalid', message: `Error while reading data, error message: ${message}` });

/** Runs a load into `table`: every row validated, then all appended (or the table replaced), or none. */
export async function runLoad(catalog: Catalog, table: FakeTable, config: LoadJobConfig, data: Buffer): Promise<LoadOutcome> {
  const lines = data.toString('utf8').split('\n');
  const rows: Cell[][] = [];
  const errors: Array<{ reason: string; message: string }> = [];
  let position = 0;
  for (const line of lines) {
    const at = position;
    position += Buffer.byteLength(line) + 1;
    if (line.trim() === '') continue;
    let json: unknown;
    try {
      json = parseExactJson(line);
    } catch {
      errors.push(readError(`JSON table encountered a parse error in row starting at position ${at}: Parser terminated before end of string`));
      continue;
    }
    const converted = convertRow(table, json, config.ignoreUnknownValues === true, Number.POSITIVE_INFINITY);
    if (isRowErrors(converted)) errors.push(...converted.map((e: RowError) => readError(`JSON parsing error in row starting at position ${at}: ${rowMessage(e)}`)));
    else rows.push(converted);
  }
  const statistics = (loaded: number): LoadStatistics => ({ inputFiles: '1', inputFileBytes: String(data.length), outputRows: String(loaded), badRecords: String(errors.length) });
  if (errors.length > (config.maxBadRecords ?? 0)) {
    const message = `Error while reading data, error message: JSON table encountered too many errors, giving up. Rows: ${rows.length + errors.length}; errors: ${errors.length}. Please look into the errors[] collection for more details.`;
    return { statistics: statistics(0), error: { result: { reason: 'invalid', message }, errors: [{ reason: 'invalid', message }, ...errors.slice(0, 100)] } };
  }
  const write = config.writeDisposition ?? 'WRITE_APPEND';
  const ref = tableRef(table.projectId, table.datasetId, table.tableId);
  const refused = await catalog.engine.use(async (conn) => {
    if (write === 'WRITE_EMPTY' && (await conn.runAndReadAll(`SELECT 1 FROM ${ref} LIMIT 1`)).currentRowCount > 0) return true;
    await conn.run('BEGIN TRANSACTION');
    try {
      if (write === 'WRITE_TRUNCATE') await conn.run(`DELETE FROM ${ref}`);
      await appendRows(conn, table, rows);
      await conn.run('COMMIT');
    } catch (err) {
      await conn.run('ROLLBACK').catch(() => undefined);
      throw err;
    }
    return false;
  });
  if (refused) {
    // WRITE_EMPTY into a table with rows: the job fails, as BigQuery's does.
    const message = `Already Exists: Table ${table.projectId}:${table.datasetId}.${table.tableId}`;
    return { statistics: statistics(0), error: { result: { reason: 'duplicate', message }, errors: [{ reason: 'duplicate', message }] } };
  }
  table.lastModifiedTime = Date.now();
  return { statistics: statistics(rows.length) };
}
