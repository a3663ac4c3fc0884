import type { DuckDBConnection } from '@duckdb/node-api';
import { RECORD_KINDS } from '../../src/core/records/types';
import type { ColumnType } from '../shared/infer-type';
import type { ColumnPlan, TableColumn } from '../shared/column-plan';
import { cachedColumns, forgetColumns } from './column-cache';
import { quoteIdent, SQL_TYPE } from './sql';
import { createTableSql } from './tables';

/** Creates `users`, `sessions` and `events` where missing. */
export async function ensureTables(conn: DuckDBConnection): Promise<void> {
  for (const kind of RECORD_KINDS) await conn.run(createTableSql(kind));
}

/** A table's columns in table order, as the current transaction sees them (kept between batches: column-cache.ts). */
export function readColumns(conn: DuckDBConnection, table: string): Promise<TableColumn[]> {
  return cachedColumns(conn, table, () => queryColumns(conn, table));
}

async function queryColumns(conn: DuckDBConnection, table: string): Promise<TableColumn[]> {
  const reader = await conn.runAndReadAll(
    `SELECT column_name, data_type FROM duckdb_columns()
     WHERE database_name = current_database() AND schema_name = 'main' AND table_name = $1
     ORDER BY column_index`,
    [table],
  );
  return reader.getRows().map(([name, sqlType]) => ({ name: String(name), sqlType: String(sqlType) }));
}

/** Whether a BIGINT column holds a whole number that a double would round (beyond ±(2^53−1)). */
async function holdsUnsafeIntegers(conn: DuckDBConnection, table: string, name: string): Promise<boolean> {
  const reader = await conn.runAndReadAll(`SELECT 1 FROM ${table} WHERE ${quoteIdent(name)} NOT BETWEEN -9007199254740991 AND 9007199254740991 LIMIT 1`);
  return reader.getRows().length > 0;
}

/**
 * Runs a plan's DDL and returns the plan as applied. It runs inside the batch's transaction, so a
 * batch that fails leaves no column behind either. A BIGINT column that holds a whole number
 * beyond 2^53 is not widened to DOUBLE, which would round it: it stays BIGINT, and the fractions
 * stay in `_properties`.
 */
export async function applyColumnPlan(conn: DuckDBConnection, table: string, plan: ColumnPlan): Promise<ColumnPlan> {
  if (plan.add.length > 0 || plan.widen.length > 0) forgetColumns(conn, table);
  for (const { name, type } of plan.add) {
    await conn.run(`ALTER TABLE ${table} ADD COLUMN ${quoteIdent(name)} ${SQL_TYPE[type]}`);
  }
  let kept: Map<string, ColumnType> | undefined;
  for (const { name, type } of plan.widen) {
    if (type === 'float' && (await holdsUnsafeIntegers(conn, table, name))) {
      (kept ??= new Map(plan.columns)).set(name, 'integer');
      continue;
    }
    await conn.run(`ALTER TABLE ${table} ALTER COLUMN ${quoteIdent(name)} TYPE ${SQL_TYPE[type]}`);
  }
  return kept ? { ...plan, widen: plan.widen.filter((w) => kept.get(w.name) === w.type), columns: kept } : plan;
}
