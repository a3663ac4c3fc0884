import type { RecordKind } from '../../src/core/records/types';
import { CONTEXT_COLUMN, fixedColumnsOf, KEY_COLUMN, PROPERTIES_COLUMN, RESERVED_COLUMNS, type FixedColumn, type ReservedColumn } from '../shared/reserved-columns';
import type { ColumnRules } from '../shared/column-plan';
import { DUCKDB_NAMING, quoteIdent } from './sql';

/** Columns that are never property columns, whatever the table: a property with one of these names (in any case) stays in `_properties`. */
export const SYSTEM_COLUMNS: readonly string[] = [...RESERVED_COLUMNS, CONTEXT_COLUMN, PROPERTIES_COLUMN];

/** How the local warehouse's tables name and type property columns (connectors/shared/column-plan.ts). */
export const LOCAL_COLUMN_RULES: ColumnRules = { system: SYSTEM_COLUMNS, ...DUCKDB_NAMING };

export const TABLE: Readonly<Record<RecordKind, string>> = { user: 'users', session: 'sessions', event: 'events' };

const RESERVED_SQL_TYPE: Readonly<Record<ReservedColumn, string>> = {
  _id: 'VARCHAR',
  _uid: 'VARCHAR',
  _sid: 'VARCHAR',
  _event: 'VARCHAR',
  _event_at: 'TIMESTAMPTZ',
  _received_at: 'TIMESTAMPTZ',
};

/** The reserved columns of a kind's table, then `_context` and `_properties`, in table order. */
export function fixedColumns(kind: RecordKind): FixedColumn[] {
  return fixedColumnsOf(kind, { reserved: RESERVED_SQL_TYPE, json: 'JSON' });
}

/**
 * `CREATE TABLE IF NOT EXISTS` for a kind. The key column is the PRIMARY KEY: it makes event
 * appends idempotent (write-events.ts) and gives upserts their conflict target. Columns
 * every record has are NOT NULL, so a malformed record is refused by the database, not stored half.
 */
export function createTableSql(kind: RecordKind): string {
  const key = KEY_COLUMN[kind];
  const notNull = new Set<string>(['_id', '_received_at', PROPERTIES_COLUMN, ...(kind === 'event' ? ['_event', '_event_at'] : [])]);
  const defs = fixedColumns(kind).map(({ name, sqlType }) => {
    const constraint = name === key ? ' PRIMARY KEY' : notNull.has(name) ? ' NOT NULL' : '';
    return `${quoteIdent(name)} ${sqlType}${constraint}`;
  });
  return `CREATE TABLE IF NOT EXISTS ${TABLE[kind]} (${defs.join(', ')})`;
}
