import type { DuckDBConnection } from '@duckdb/node-api';
import type { TableColumn } from '../shared/column-plan';

/**
 * Each table's columns as the writer's connection last read them, kept from one batch to the
 * next. Reading them (`duckdb_columns()`) was a fixed cost of every batch: a batch of 25 events
 * cost DuckDB 669–740 µs a record with it and 502–619 without; batches of 1 000 showed no
 * difference (bench/RESULTS.md). A trickle, batched every 250 ms, pays it four times a second.
 *
 * The list stays true while the connection is open: the file has one writer process, which holds
 * it exclusively (database.ts), and within it only the column plan changes a table. A plan that
 * alters a table forgets that table's list first (schema.ts): the next batch reads the table
 * again, whether the change was committed or rolled back. A connection opened anew starts with
 * none.
 */
const cache = new WeakMap<DuckDBConnection, Map<string, TableColumn[]>>();

/** A table's columns as cached for `conn`, or read by `read` and cached. */
export async function cachedColumns(conn: DuckDBConnection, table: string, read: () => Promise<TableColumn[]>): Promise<TableColumn[]> {
  let tables = cache.get(conn);
  if (!tables) cache.set(conn, (tables = new Map()));
  let columns = tables.get(table);
  if (!columns) tables.set(table, (columns = await read()));
  return columns;
}

/** Forgets the columns of `table`: they are about to change. */
export function forgetColumns(conn: DuckDBConnection, table: string): void {
  cache.get(conn)?.delete(table);
}
