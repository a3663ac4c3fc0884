import type { DuckDBConnection } from '@duckdb/node-api';
import { RECORD_KINDS } from '../../src/core/records/types';
import type { ColumnPlan, TableColumn } from './column-plan';
import { quoteIdent, SQL_TYPE } from './sql';
import { createTableSql } from './tables';

/** Creates `users`, `sessions` and `events` where missing. */
export async function ensureTables(conn: DuckDBConnection): Promise<void> {
  for (const kind of RECORD_KINDS) await conn.run(createTableSql(kind));
}

/** A table's columns in table order, as the current transaction sees them. */
export async function readColumns(conn: DuckDBConnection, table: string): Promise<TableColumn[]> {
  const reader = await conn.runAndReadAll(
    `SELECT column_name, data_type FROM duckdb_columns()
     WHERE database_name = current_database() AND schema_name = 'main' AND table_name = $1
     ORDER BY column_index`,
    [table],
  );
  return reader.getRows().map(([name, sqlType]) => ({ name: String(name), sqlType: String(sqlType) }));
}

/**
 * Runs a plan's DDL. It runs inside the batch's transaction, so a batch that fails leaves no
 * column behind either.
 */
export async function applyColumnPlan(conn: DuckDBConnection, table: string, plan: ColumnPlan): Promise<void> {
  for (const { name, type } of plan.add) {
    await conn.run(`ALTER TABLE ${table} ADD COLUMN ${quoteIdent(name)} ${SQL_TYPE[type]}`);
  }
  for (const name of plan.widen) {
    await conn.run(`ALTER TABLE ${table} ALTER COLUMN ${quoteIdent(name)} TYPE ${SQL_TYPE.float}`);
  }
}
