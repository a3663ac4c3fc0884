import type { RecordKind } from '../../src/core/records/types';
import { fixedColumnsOf, KEY_COLUMN, PROPERTIES_COLUMN, type FixedColumn, type ReservedColumn } from '../shared/reserved-columns';
import { qualified, quoteIdent } from './sql';

export const TABLE: Readonly<Record<RecordKind, string>> = { user: 'users', session: 'sessions', event: 'events' };

const RESERVED_SQL_TYPE: Readonly<Record<ReservedColumn, string>> = {
  _id: 'text',
  _uid: 'text',
  _sid: 'text',
  _event: 'text',
  _event_at: 'timestamptz',
  _received_at: 'timestamptz',
};

/** The reserved columns of a kind's table, then `_context` and `_properties`, in table order. */
export function fixedColumns(kind: RecordKind): FixedColumn[] {
  return fixedColumnsOf(kind, { reserved: RESERVED_SQL_TYPE, json: 'jsonb' });
}

/**
 * The schema's DDL, each statement idempotent: the tables with their key as PRIMARY KEY (events
 * appended once by `_id`, users and sessions upserted on `_uid` / `_sid`), and a b-tree on
 * `events._event_at`, so that `WHERE _event_at BETWEEN …` reads a range rather than the table.
 * A b-tree rather than BRIN: events arrive nearly in time order, but a backfill or an import
 * brings old times among new ones, which leaves BRIN's block ranges covering everything.
 */
export function schemaSql(schema: string): string[] {
  const statements = [`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`];
  for (const kind of ['user', 'session', 'event'] as const) {
    const key = KEY_COLUMN[kind];
    const notNull = new Set<string>(['_id', '_received_at', PROPERTIES_COLUMN, ...(kind === 'event' ? ['_event', '_event_at'] : [])]);
    const defs = fixedColumns(kind).map(({ name, sqlType }) => `${quoteIdent(name)} ${sqlType}${name === key ? ' PRIMARY KEY' : notNull.has(name) ? ' NOT NULL' : ''}`);
    statements.push(`CREATE TABLE IF NOT EXISTS ${qualified(schema, TABLE[kind])} (${defs.join(', ')})`);
  }
  statements.push(`CREATE INDEX IF NOT EXISTS events_event_at ON ${qualified(schema, 'events')} ("_event_at")`);
  return statements;
}
