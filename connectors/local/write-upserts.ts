import { listValue, type DuckDBConnection } from '@duckdb/node-api';
import { parseExactJson } from '../../src/core/records/exact-json';
import type { Properties } from '../../src/core/records/types';
import { applyChange, type MergedChange, type UpsertKind } from '../shared/coalesce-upserts';
import { CONTEXT_COLUMN, KEY_COLUMN, reservedValuesOfChange } from '../shared/reserved-columns';
import { planColumns, touchedColumns } from '../shared/column-plan';
import { createRowMapper } from './rows';
import { applyColumnPlan, readColumns } from './schema';
import { quoteIdent } from './sql';
import { columnList, dropStage, stageRows } from './stage';
import { fixedColumns, LOCAL_COLUMN_RULES, TABLE } from './tables';

/** The stored `_properties` of the given keys; keys without a row are absent. */
async function readStored(conn: DuckDBConnection, kind: UpsertKind, keys: readonly string[]): Promise<Map<string, Properties>> {
  const key = quoteIdent(KEY_COLUMN[kind]);
  const reader = await conn.runAndReadAll(
    `SELECT ${key}, _properties FROM ${TABLE[kind]} WHERE ${key} IN (SELECT unnest($1::VARCHAR[]))`,
    [listValue([...keys])],
  );
  const stored = new Map<string, Properties>();
  for (const [k, json] of reader.getRows()) {
    const parsed: unknown = typeof json === 'string' ? parseExactJson(json) : null;
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) stored.set(String(k), parsed as Properties);
  }
  return stored;
}

/**
 * Applies one batch's merged changes to `users` or `sessions`, inside the caller's transaction.
 *
 * The merge happens here rather than in SQL: DuckDB's `json_merge_patch` follows RFC 7396, which
 * merges nested objects key by key and drops nulls found inside them, so `{"prefs":{"x":null}}`
 * would be stored as `{"prefs":{}}` and `_properties` would disagree with the `prefs` column.
 * Reading the stored properties of the batch's keys (one indexed query), merging top-level
 * properties with the same rule as every other connector (`applyChange`), and writing the whole
 * row keeps `_properties` and the typed columns one function of the other. It is safe because the
 * file has one writer and the read and the write share a transaction.
 */
export async function writeUpserts(conn: DuckDBConnection, kind: UpsertKind, changes: readonly MergedChange[], maxColumns: number): Promise<void> {
  const table = TABLE[kind];
  const stored = await readStored(
    conn,
    kind,
    changes.map((c) => c.key),
  );
  const states = changes.map((c) => applyChange(stored.get(c.key), c.properties));

  const plan = await applyColumnPlan(conn, table, planColumns(LOCAL_COLUMN_RULES, await readColumns(conn, table), states, maxColumns));
  const mapper = createRowMapper(kind, plan, touchedColumns(plan, states));
  const select = await stageRows(
    conn,
    mapper.columns,
    changes.map((c, i) => mapper.row(reservedValuesOfChange(kind, c), c.context, states[i]!)),
  );

  const key = KEY_COLUMN[kind];
  // A session update without `_uid`, or any update without request context, keeps the stored one.
  const keepStored = new Set<string>([CONTEXT_COLUMN, ...(kind === 'session' ? ['_uid'] : [])]);
  // Every writable column is assigned: one absent from the stage becomes NULL, which is right,
  // since the merged state no longer has that property (cleared) or has a value that does not fit.
  const assignments = [...fixedColumns(kind).map((c) => c.name), ...plan.columns.keys()]
    .filter((name) => name !== key)
    .map((name) => {
      const col = quoteIdent(name);
      return keepStored.has(name) ? `${col} = COALESCE(excluded.${col}, ${table}.${col})` : `${col} = excluded.${col}`;
    });
  await conn.run(
    `INSERT INTO ${table} (${columnList(mapper.columns)}) ${select} ON CONFLICT (${quoteIdent(key)}) DO UPDATE SET ${assignments.join(', ')}`,
  );
  await dropStage(conn);
}
