import type { RecordKind } from '../../src/core/records/types';
import type { ColumnType } from '../shared/infer-type';
import { CONTEXT_COLUMN, KEY_COLUMN, PROPERTIES_COLUMN, RESERVED_COLUMNS_BY_KIND, type ReservedColumn } from '../shared/reserved-columns';
import type { FieldSchema, TableSpec } from './client';

/** Standard SQL type of each column type. */
/** A whole number beyond 64 bits goes to BIGNUMERIC, which holds every 128-bit integer exactly (NUMERIC has 29 integer digits). */
export const BQ_TYPE: Readonly<Record<ColumnType, string>> = { integer: 'INT64', hugeint: 'BIGNUMERIC', float: 'FLOAT64', boolean: 'BOOL', string: 'STRING', json: 'JSON' };

/** The column type Tributary writes to a column of this BigQuery type, legacy names included; undefined for others (DATE, NUMERIC…). A BIGNUMERIC column takes whole numbers only from Tributary. */
export function columnTypeOf(bqType: string): ColumnType | undefined {
  switch (bqType.toUpperCase()) {
    case 'INT64':
    case 'INTEGER':
      return 'integer';
    case 'BIGNUMERIC':
    case 'BIGDECIMAL':
      return 'hugeint';
    case 'FLOAT64':
    case 'FLOAT':
      return 'float';
    case 'BOOL':
    case 'BOOLEAN':
      return 'boolean';
    case 'STRING':
      return 'string';
    case 'JSON':
      return 'json';
    default:
      return undefined;
  }
}

const RESERVED_TYPE: Readonly<Record<ReservedColumn, string>> = { _id: 'STRING', _uid: 'STRING', _sid: 'STRING', _event: 'STRING', _event_at: 'TIMESTAMP', _received_at: 'TIMESTAMP' };

/** Tributary's columns of a kind's table, in order: reserved columns, `_context`, `_properties`. */
export function fixedFields(kind: RecordKind): FieldSchema[] {
  const required = new Set<string>(['_id', '_received_at', PROPERTIES_COLUMN, KEY_COLUMN[kind], ...(kind === 'event' ? ['_event', '_event_at'] : [])]);
  return [
    ...RESERVED_COLUMNS_BY_KIND[kind].map((name) => ({ name, type: RESERVED_TYPE[name], mode: required.has(name) ? 'REQUIRED' : 'NULLABLE' })),
    { name: CONTEXT_COLUMN, type: 'JSON', mode: 'NULLABLE' },
    { name: PROPERTIES_COLUMN, type: 'JSON', mode: 'REQUIRED' },
  ];
}

/**
 * A new table: events partitioned by day on `_event_at` (queries filtering on event time read only
 * those days) and clustered by `_event`, `_uid`; users and sessions clustered by their key, which
 * the MERGE joins on. https://cloud.google.com/bigquery/docs/partitioned-tables,
 * https://cloud.google.com/bigquery/docs/clustered-tables
 */
export function tableSpec(kind: RecordKind): TableSpec {
  const fields = fixedFields(kind);
  if (kind === 'event') return { fields, timePartitioning: { type: 'DAY', field: '_event_at' }, clustering: { fields: ['_event', '_uid'] } };
  return { fields, clustering: { fields: [KEY_COLUMN[kind]] } };
}
