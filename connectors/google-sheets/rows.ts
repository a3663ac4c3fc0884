import type { MergedChange, UpsertKind } from '../shared/coalesce-upserts';
import { CONTEXT_COLUMN, contextValue, RESERVED_COLUMNS_BY_KIND, reservedValues, reservedValuesOfChange, type ReservedValues } from '../shared/reserved-columns';
import type { Properties, RecordKind, RequestContext, TrackedRecord } from '../../src/core/records/types';
import { rowRange } from './a1';
import type { CellValue, ValueRange } from './client';
import { cellValue, fitCell } from './values';

/** Column number → what to write there; `''` clears the cell. */
export type RowPatch = Map<number, CellValue>;
/** A row of a range written with values.batchUpdate: `null` leaves a cell alone. */
export type RowValues = Array<CellValue | null>;

/**
 * The header names a tab needs for these rows, in order: the kind's reserved columns, `_context`
 * once a row carries request context, then each property the first time it has a value. A
 * property that is only ever `null` needs no column: on an event it is an empty cell, on a user or
 * session it clears a cell that does not exist.
 */
export function wantedColumns(kind: RecordKind, rows: ReadonlyArray<{ properties: Properties; context?: RequestContext | undefined }>): string[] {
  const names = new Set<string>(RESERVED_COLUMNS_BY_KIND[kind]);
  if (rows.some((r) => contextValue(r.context))) names.add(CONTEXT_COLUMN);
  for (const row of rows) for (const name of Object.keys(row.properties)) if (row.properties[name] !== null) names.add(name);
  return [...names];
}

function put(patch: RowPatch, cols: ReadonlyMap<string, number>, name: string, value: CellValue): void {
  const col = cols.get(name);
  if (col !== undefined) patch.set(col, value);
}

function putReserved(patch: RowPatch, cols: ReadonlyMap<string, number>, reserved: ReservedValues): void {
  for (const [name, value] of Object.entries(reserved)) if (value !== null && value !== undefined) put(patch, cols, name, value);
}

function putContext(patch: RowPatch, cols: ReadonlyMap<string, number>, context: RequestContext | undefined): void {
  const ctx = contextValue(context);
  if (ctx) put(patch, cols, CONTEXT_COLUMN, fitCell(JSON.stringify(ctx)));
}

/** An event's cells under the header that names each value. */
export function eventPatch(record: TrackedRecord, cols: ReadonlyMap<string, number>): RowPatch {
  const patch: RowPatch = new Map();
  putReserved(patch, cols, reservedValues(record));
  putContext(patch, cols, record.context);
  for (const name of Object.keys(record.properties)) {
    const value = cellValue(record.properties[name]!);
    if (value !== null) put(patch, cols, name, value);
  }
  return patch;
}

/**
 * A user's or session's merged change as cells: only what the change supplies; `null` clears
 * (`''`). A session's `_uid` and any row's `_context` are left alone when the change has none.
 */
export function upsertPatch(kind: UpsertKind, change: MergedChange, cols: ReadonlyMap<string, number>): RowPatch {
  const patch: RowPatch = new Map();
  putReserved(patch, cols, reservedValuesOfChange(kind, change));
  putContext(patch, cols, change.context);
  for (const name of Object.keys(change.properties)) {
    const value = cellValue(change.properties[name]!);
    put(patch, cols, name, value ?? '');
  }
  return patch;
}

/** A new row, from column A; nothing to clear in a new row. */
export function newRow(patch: RowPatch): RowValues {
  const width = Math.max(0, ...patch.keys());
  const row: RowValues = new Array<CellValue | null>(width).fill(null);
  for (const [col, value] of patch) row[col - 1] = value === '' ? null : value;
  return row;
}

/** One existing row's change as a single range, from its first to its last written column. */
export function rowUpdate(title: string, row: number, patch: RowPatch): ValueRange | undefined {
  if (patch.size === 0) return undefined;
  const cols = [...patch.keys()];
  const c1 = Math.min(...cols);
  const c2 = Math.max(...cols);
  const values: RowValues = new Array<CellValue | null>(c2 - c1 + 1).fill(null);
  for (const [col, value] of patch) values[col - c1] = value;
  return { range: rowRange(title, row, c1, c2), majorDimension: 'ROWS', values: [values] };
}

/** "To speed up requests, we recommend a 2 MB maximum payload" (https://developers.google.com/workspace/sheets/api/limits). */
export const MAX_REQUEST_BYTES = 2_000_000;

/** Splits rows into runs whose JSON stays under `maxBytes` (one run holds at least one row). */
export function chunkRows(rows: RowValues[], maxBytes = MAX_REQUEST_BYTES): Array<{ rows: RowValues[]; offset: number }> {
  const out: Array<{ rows: RowValues[]; offset: number }> = [];
  let current: RowValues[] = [];
  let offset = 0;
  let bytes = 0;
  rows.forEach((row, i) => {
    const size = Buffer.byteLength(JSON.stringify(row)) + 1;
    if (current.length > 0 && bytes + size > maxBytes) {
      out.push({ rows: current, offset });
      current = [];
      offset = i;
      bytes = 0;
    }
    current.push(row);
    bytes += size;
  });
  if (current.length > 0) out.push({ rows: current, offset });
  return out;
}
