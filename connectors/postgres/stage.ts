import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import type { PoolClient } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { copyRow } from './copy-text';
import { quoteIdent } from './sql';

/** A destination column and the SQL type its cells are read as. */
export interface StagedColumn {
  name: string;
  sqlType: string;
}

/** One row's cells, as text in the column's type; `null` for SQL NULL. */
export type StagedRow = ReadonlyArray<string | null>;

const STAGE = 'tributary_stage';
/** Rows a COPY chunk carries: the stream's own buffering does the rest. */
const ROWS_PER_CHUNK = 500;

function* chunks(rows: readonly StagedRow[]): Generator<string> {
  for (let i = 0; i < rows.length; i += ROWS_PER_CHUNK) {
    let text = '';
    for (const row of rows.slice(i, i + ROWS_PER_CHUNK)) text += copyRow(row);
    yield text;
  }
}

/**
 * Loads rows into a temporary table of the batch's columns by `COPY … FROM STDIN` (text format),
 * the fast path into PostgreSQL, and returns the stage's name. The stage is dropped with the
 * transaction (`ON COMMIT DROP`), and its columns have the destination's types, so COPY parses each
 * value once and the `INSERT … SELECT` that follows moves rows without casts.
 */
export async function stageRows(client: PoolClient, columns: readonly StagedColumn[], rows: readonly StagedRow[]): Promise<string> {
  await client.query(`DROP TABLE IF EXISTS pg_temp.${STAGE}`);
  await client.query(`CREATE TEMP TABLE ${STAGE} (${columns.map((c) => `${quoteIdent(c.name)} ${c.sqlType}`).join(', ')}) ON COMMIT DROP`);
  await pipeline(Readable.from(chunks(rows)), client.query(copyFrom(`COPY ${STAGE} (${columnList(columns)}) FROM STDIN`)));
  return STAGE;
}

export const columnList = (columns: readonly StagedColumn[]): string => columns.map((c) => quoteIdent(c.name)).join(', ');
