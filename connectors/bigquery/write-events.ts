import type { TrackedRecord } from '../../src/core/records/types';
import { PermanentError, RetryableError, type ConnectorError } from '../errors';
import { uniqueById } from '../shared/batch-records';
import { columnValue } from '../shared/infer-type';
import { contextValue, CONTEXT_COLUMN, PROPERTIES_COLUMN } from '../shared/reserved-columns';
import type { RecordOutcome } from '../types';
import type { InsertRow, RowErrors } from './client';
import { planColumns, type ColumnPlan, type PropertyColumn, type TableState } from './columns';
import { foldName } from './names';
import { columnTypeOf } from './tables';
import { storedEventIds } from './stored-events';
import { withTableLock } from './table-lock';
import type { PartResult, WriteDeps } from './write-part';
import { jsonColumnText } from './json-text';

/**
 * Streaming limits (https://cloud.google.com/bigquery/quotas#streaming_inserts): at most 50 000
 * rows and 10 MB per insertAll request, with 500 rows the recommended maximum. Requests are cut at
 * 500 rows or 9 MiB of row JSON, whichever comes first, leaving room for the envelope.
 */
export const MAX_ROWS_PER_INSERT = 500;
export const MAX_INSERT_BYTES = 9 * 1024 * 1024;
/** insertAll requests of one batch in flight at once. */
const PARALLEL_INSERTS = 4;

/**
 * An insertAll row handed to the client as an opaque object: the library deep-copies a request
 * body twice (`extend`) and walks it to replace `{{projectId}}` in every string, which for event
 * rows costs more than the rest of the write and would rewrite that text inside event data.
 * A class instance is copied by reference and not walked; `JSON.stringify` sends `toJSON()`.
 */
class OpaqueRow implements InsertRow {
  constructor(
    readonly insertId: string,
    readonly json: Record<string, unknown>,
  ) {}

  toJSON(): { insertId: string; json: Record<string, unknown> } {
    return { insertId: this.insertId, json: this.json };
  }
}

/** The row, and an upper bound of its size in bytes, without serializing it a second time. */
export function eventRow(record: TrackedRecord, columns: ReadonlyMap<string, PropertyColumn>): { row: InsertRow; bytes: number } {
  const json: Record<string, unknown> = { _id: record.id, _event: record.event, _event_at: record.eventAt ?? record.receivedAt, _received_at: record.receivedAt };
  if (record.uid) json._uid = record.uid;
  if (record.sid) json._sid = record.sid;
  const ctx = contextValue(record.context);
  if (ctx) json[CONTEXT_COLUMN] = JSON.stringify(ctx);
  // JSON columns take JSON text in insertAll.
  const properties = jsonColumnText(record.properties);
  json[PROPERTIES_COLUMN] = properties;
  for (const name of Object.keys(record.properties)) {
    const pc = columns.get(name);
    const value = pc ? columnValue(pc.type, record.properties[name], jsonColumnText) : undefined;
    if (value !== undefined) json[pc!.column] = value;
  }
  // The typed columns repeat the properties (≤ their JSON text plus a column name each), and
  // `_properties` is that text escaped once more; escaping at most doubles text, and UTF-8 takes at most 3 bytes per UTF-16 unit.
  const bytes = 12 * properties.length + 3 * (record.id.length * 2 + (record.event?.length ?? 0) + (record.uid?.length ?? 0) + (record.sid?.length ?? 0)) + 600 + 300 * Object.keys(record.properties).length;
  return { row: new OpaqueRow(record.id, json), bytes };
}

/** Whether the table's column of that name is one Tributary widened from INT64 (FLOAT64 or BIGNUMERIC now). */
function widenedColumn(state: TableState, location: string): boolean {
  const field = state.fields.find((f) => foldName(f.name) === foldName(location));
  const type = field ? columnTypeOf(field.type) : undefined;
  return type === 'float' || type === 'hugeint';
}

/** The outcome of a row insertAll answered with errors. */
function rowOutcome(errors: RowErrors['errors'], state: TableState): RecordOutcome {
  const invalid = errors.find((e) => e.reason === 'invalid');
  if (invalid) {
    // A column added moments ago can be refused by streaming for a few minutes
    // (https://cloud.google.com/bigquery/docs/managing-table-schemas): not the row's fault.
    if (/^no such field/i.test(invalid.message) && state.taken.has(foldName(invalid.location))) {
      return { status: 'retry', error: new RetryableError(`BigQuery does not accept the new column ${invalid.location} for streaming yet`, { reason: 'schemaPropagation' }) };
    }
    // Likewise a column widened moments ago: streaming checks values against its old INT64 type for a while.
    if (/to integer/i.test(invalid.message) && widenedColumn(state, invalid.location)) {
      return { status: 'retry', error: new RetryableError(`BigQuery does not accept the widened column ${invalid.location} for streaming yet`, { reason: 'schemaPropagation' }) };
    }
    const where = invalid.location ? `${invalid.location}: ` : '';
    return { status: 'failed', error: new PermanentError(`BigQuery refused this row: ${where}${invalid.message}`, { status: 400, reason: 'invalid' }) };
  }
  const reason = errors[0]?.reason ?? 'unknown';
  const message = reason === 'stopped' ? 'BigQuery did not insert this row because another row of its request was invalid' : `BigQuery did not insert this row: ${errors[0]?.message ?? reason}`;
  return { status: 'retry', error: new RetryableError(message, { reason }) };
}

/** Cuts rows into requests of at most 500 rows and 9 MiB. */
function chunk(rows: ReadonlyArray<{ row: InsertRow; bytes: number }>): InsertRow[][] {
  const chunks: InsertRow[][] = [];
  let current: InsertRow[] = [];
  let bytes = 0;
  for (const r of rows) {
    if (current.length === MAX_ROWS_PER_INSERT || (current.length > 0 && bytes + r.bytes > MAX_INSERT_BYTES)) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(r.row);
    bytes += r.bytes;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

/**
 * The events table as these events need it: columns for their new properties (tables.patch) and
 * the widenings they call for, made first; the plan that maps their properties to columns.
 */
export async function prepareEventColumns(deps: WriteDeps, events: readonly TrackedRecord[], signal: AbortSignal, known?: TableState): Promise<{ state: TableState; plan: ColumnPlan }> {
  const table = deps.schema.tableName('event');
  const state = known ?? (await deps.schema.table('event', signal));
  const plan = planColumns(state, events.map((r) => r.properties), deps.settings.maxColumns);
  if (plan.add.length === 0 && plan.widen.length === 0) return { state, plan };
  return withTableLock(`${deps.settings.projectId}:${deps.settings.dataset}.${table}`, () => deps.schema.evolve('event', state, plan, signal), signal);
}

/**
 * Events: one row each, appended with tabledata.insertAll, `insertId` = record id (BigQuery drops
 * a row whose insertId it has seen in the last minute or so). Events that may have landed already
 * (`mayBeStored`) are looked up first and not sent again, so a re-send does not double them however
 * late it comes. New properties get columns first (tables.patch). Per-row `insertErrors` become
 * per-record outcomes; a request that fails as a whole leaves its rows unsettled (`error`).
 */
export async function writeEvents(deps: WriteDeps, records: readonly TrackedRecord[], signal: AbortSignal, mayBeStored: (id: string) => boolean = () => false): Promise<PartResult> {
  const outcomes = new Map<string, RecordOutcome>();
  let events = uniqueById(records);
  const table = deps.schema.tableName('event');
  const known = await deps.schema.table('event', signal);
  const stored = await storedEventIds(deps, table, events.filter((r) => mayBeStored(r.id)), signal);
  if (stored.size > 0) {
    for (const id of stored) outcomes.set(id, { status: 'ok' });
    events = events.filter((r) => !stored.has(r.id));
  }
  const { state, plan } = await prepareEventColumns(deps, events, signal, known);

  const sized: Array<{ row: InsertRow; bytes: number }> = [];
  for (const record of events) {
    const { row, bytes: bound } = eventRow(record, plan.columns);
    // Only rows whose bound is large are measured exactly.
    const bytes = bound > MAX_INSERT_BYTES / MAX_ROWS_PER_INSERT ? Buffer.byteLength(JSON.stringify(row)) : bound;
    if (bytes > MAX_INSERT_BYTES) outcomes.set(record.id, { status: 'failed', error: new PermanentError(`the event is ${bytes} bytes as a BigQuery row; insertAll takes at most 10 MB per request`, { reason: 'rowTooLarge' }) });
    else sized.push({ row, bytes });
  }

  let error: ConnectorError | undefined;
  const queue = chunk(sized);
  const worker = async () => {
    for (let rows = queue.shift(); rows; rows = queue.shift()) {
      try {
        const failed = new Map((await deps.api.insertAll(table, rows, signal)).map((e) => [e.index, e.errors]));
        rows.forEach((row, i) => {
          const errors = failed.get(i);
          outcomes.set(row.insertId, errors ? rowOutcome(errors, state) : { status: 'ok' });
        });
      } catch (err) {
        const e = err as ConnectorError;
        if (e instanceof PermanentError) for (const row of rows) outcomes.set(row.insertId, { status: 'failed', error: e });
        else error ??= e;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_INSERTS, queue.length) }, worker));
  return error ? { outcomes, error } : { outcomes };
}
