import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent } from './sql';

/** A destination column and the SQL type its staged text is cast to. */
export interface StagedColumn {
  name: string;
  sqlType: string;
}

/** One staged row: a cell per column, as text, `null` for SQL NULL. */
export type StagedRow = ReadonlyArray<string | null>;

const STAGE = 'tributary_stage';

/**
 * Loads rows into a connection-local temp table through DuckDB's Appender and returns the
 * `SELECT` that reads them back cast to the destination types.
 *
 * Why a stage: the Appender is the fast path into DuckDB (about 5× multi-row prepared INSERTs
 * in our measurements) but cannot resolve conflicts, so rows land in a stage and one `INSERT … SELECT … ON
 * CONFLICT` moves them. The stage is all VARCHAR with positional names, so no property name and
 * no value type can break the append; a value the cast refuses fails the whole statement, and the
 * caller then isolates the record (see write-batch.ts).
 */
export async function stageRows(conn: DuckDBConnection, columns: readonly StagedColumn[], rows: readonly StagedRow[]): Promise<string> {
  const defs = columns.map((_, i) => `c${i} VARCHAR`).join(', ');
  await conn.run(`CREATE OR REPLACE TEMP TABLE ${STAGE} (${defs})`);
  const appender = await conn.createAppender(STAGE, 'main', 'temp');
  try {
    for (const row of rows) {
      for (const cell of row) {
        if (cell === null) appender.appendNull();
        else appender.appendVarchar(cell);
      }
      appender.endRow();
    }
  } finally {
    appender.closeSync();
  }
  const casts = columns.map((c, i) => (c.sqlType === 'VARCHAR' ? `c${i}` : `CAST(c${i} AS ${c.sqlType})`)).join(', ');
  return `SELECT ${casts} FROM ${STAGE}`;
}

/** Drops the stage, so that a large batch's text does not stay in memory until the next one. */
export async function dropStage(conn: DuckDBConnection): Promise<void> {
  await conn.run(`DROP TABLE IF EXISTS ${STAGE}`);
}

export const columnList = (columns: readonly StagedColumn[]): string => columns.map((c) => quoteIdent(c.name)).join(', ');
