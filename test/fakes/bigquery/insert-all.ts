import type { DuckDBAppender, DuckDBConnection } from '@duckdb/node-api';
import type { Catalog, FakeTable } from './catalog';
import { schemaOf } from './engine';
import { FakeApiError, invalid } from './errors';
import type { FakeField } from './names';
import { toCell, ValueError, type Cell } from './values';

/** https://cloud.google.com/bigquery/quotas#streaming_inserts: "Maximum rows per request: 50,000". */
export const MAX_ROWS_PER_REQUEST = 50_000;

export interface RowError {
  reason: string;
  location: string;
  debugInfo: string;
  message: string;
}

export interface InsertAllResponse {
  kind: 'bigquery#tableDataInsertAllResponse';
  insertErrors?: Array<{ index: number; errors: RowError[] }>;
}

export interface InsertAllOptions {
  /** insertIds are remembered this long. Google: "at least one minute", best effort. */
  dedupWindowMs: number;
  now: () => number;
}

export interface InsertAllStats {
  rowsInserted: number;
  rowsDeduplicated: number;
}

const rowError = (location: string, message: string): RowError => ({ reason: 'invalid', location, debugInfo: '', message });

/** Validates one row against the schema; returns its cells in table order, or its errors. */
export function convertRow(table: FakeTable, json: unknown, ignoreUnknown: boolean, now: number): Cell[] | RowError[] {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return [rowError('', 'Row is not a JSON object.')];
  const byName = new Map<string, number>(table.fields.map((f, i) => [f.name.toLowerCase(), i]));
  const cells: Cell[] = table.fields.map(() => null);
  const errors: RowError[] = [];
  for (const [key, value] of Object.entries(json)) {
    const index = byName.get(key.toLowerCase());
    const visible = index !== undefined && (table.visibleAt.get(key.toLowerCase()) ?? 0) <= now;
    if (index === undefined || !visible) {
      if (!ignoreUnknown) errors.push(rowError(key, `no such field: ${key}.`));
      continue;
    }
    try {
      // A column whose type changed moments ago: streaming still checks values against the old type.
      const old = table.streamingTypes.get(key.toLowerCase());
      if (old && old.until > now) toCell(old.type, value);
      cells[index] = toCell(table.fields[index]!.type, value);
    } catch (err) {
      if (!(err instanceof ValueError)) throw err;
      errors.push(rowError(key, err.message));
    }
  }
  table.fields.forEach((f, i) => {
    if (f.mode === 'REQUIRED' && cells[i] === null && !errors.some((e) => e.location.toLowerCase() === f.name.toLowerCase())) {
      errors.push(rowError(f.name, `Missing required field: ${f.name}.`));
    }
  });
  return errors.length > 0 ? errors : cells;
}

/** Appends validated rows to the table's storage, on a connection the caller holds. */
export async function appendRows(conn: DuckDBConnection, table: FakeTable, rows: readonly Cell[][]): Promise<void> {
  const appender = await conn.createAppender(table.tableId, schemaOf(table.projectId, table.datasetId));
  try {
    for (const cells of rows) {
      cells.forEach((cell, i) => appendCell(appender, table.fields[i]!, cell));
      appender.endRow();
    }
  } finally {
    appender.closeSync();
  }
}

function appendCell(appender: DuckDBAppender, field: FakeField, cell: Cell): void {
  if (cell === null) appender.appendNull();
  else if (field.type === 'INTEGER') appender.appendBigInt(cell as bigint);
  else if (field.type === 'FLOAT') appender.appendDouble(cell as number);
  else if (field.type === 'BOOLEAN') appender.appendBoolean(cell as boolean);
  else appender.appendVarchar(cell as string);
}

/**
 * tabledata.insertAll (https://cloud.google.com/bigquery/docs/reference/rest/v2/tabledata/insertAll).
 * Every row is validated; an invalid row gets `reason: invalid` with the offending field as
 * `location`. Unless `skipInvalidRows`, one invalid row stops the request: nothing is written and
 * every valid row is reported `stopped`. Rows whose `insertId` was seen within the dedup window
 * are acknowledged without being written again.
 */
export async function insertAll(catalog: Catalog, path: { projectId: string; datasetId: string; tableId: string }, body: Record<string, unknown>, opts: InsertAllOptions, stats: InsertAllStats): Promise<InsertAllResponse> {
  const table = catalog.table(path.projectId, path.datasetId, path.tableId);
  const rows = Array.isArray(body.rows) ? (body.rows as Array<{ insertId?: unknown; json?: unknown }>) : [];
  if (rows.length === 0) throw invalid('No rows present in the request.');
  if (rows.length > MAX_ROWS_PER_REQUEST) throw invalid(`too many rows present in the request, limit: ${MAX_ROWS_PER_REQUEST} row count: ${rows.length}.`);
  const now = opts.now();
  const converted = rows.map((r) => convertRow(table, r?.json, body.ignoreUnknownValues === true, now));
  const failed = converted.map((c, index) => ({ index, c })).filter((x): x is { index: number; c: RowError[] } => isRowErrors(x.c));
  const skipInvalid = body.skipInvalidRows === true;
  if (failed.length > 0 && !skipInvalid) {
    const stopped: RowError = { reason: 'stopped', location: '', debugInfo: '', message: '' };
    return {
      kind: 'bigquery#tableDataInsertAllResponse',
      insertErrors: converted.map((c, index) => ({ index, errors: isRowErrors(c) ? c : [stopped] })),
    };
  }

  for (const [id, at] of table.insertIds) if (now - at > opts.dedupWindowMs) table.insertIds.delete(id);
  const fresh: Cell[][] = [];
  converted.forEach((c, i) => {
    if (isRowErrors(c)) return;
    const id = rows[i]?.insertId;
    if (typeof id === 'string' && id !== '') {
      if (table.insertIds.has(id)) {
        stats.rowsDeduplicated++;
        return;
      }
      table.insertIds.set(id, now);
    }
    fresh.push(c);
  });
  if (fresh.length > 0) {
    await catalog.engine.use((conn) => appendRows(conn, table, fresh));
    stats.rowsInserted += fresh.length;
    table.lastStreamedAt = now;
  }
  const response: InsertAllResponse = { kind: 'bigquery#tableDataInsertAllResponse' };
  if (failed.length > 0) response.insertErrors = failed.map(({ index, c }) => ({ index, errors: c }));
  return response;
}

export function isRowErrors(c: Cell[] | RowError[]): c is RowError[] {
  return c.length > 0 && typeof c[0] === 'object' && c[0] !== null && 'reason' in (c[0] as object);
}

export const payloadTooLarge = (limit: number): FakeApiError => new FakeApiError(400, 'badRequest', `Request payload size exceeds the limit: ${limit} bytes.`);
