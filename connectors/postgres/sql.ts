import type { ColumnRules } from '../shared/column-plan';
import type { ColumnType } from '../shared/infer-type';
import { CONTEXT_COLUMN, PROPERTIES_COLUMN, RESERVED_COLUMNS } from '../shared/reserved-columns';

/** A quoted identifier: property names become column names verbatim, case and all. */
export const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** `"schema"."table"`. */
export const qualified = (schema: string, table: string): string => `${quoteIdent(schema)}.${quoteIdent(table)}`;

/**
 * PostgreSQL cuts an identifier to 63 bytes without a word (NAMEDATALEN − 1), so two long names
 * would become one column: a longer name is not a column, its value stays in `_properties`.
 */
export const MAX_IDENT_BYTES = 63;

export const SQL_TYPE: Readonly<Record<ColumnType, string>> = {
  integer: 'bigint',
  hugeint: 'numeric',
  float: 'double precision',
  boolean: 'boolean',
  string: 'text',
  json: 'jsonb',
};

/** The column type of a column as `information_schema.columns.data_type` names it; `undefined` for one added by hand in another type. */
export function columnTypeOf(dataType: string): ColumnType | undefined {
  switch (dataType) {
    case 'bigint':
      return 'integer';
    case 'numeric':
      return 'hugeint';
    case 'double precision':
      return 'float';
    case 'boolean':
      return 'boolean';
    case 'text':
      return 'string';
    case 'jsonb':
      return 'json';
    default:
      return undefined;
  }
}

export const SYSTEM_COLUMNS: readonly string[] = [...RESERVED_COLUMNS, CONTEXT_COLUMN, PROPERTIES_COLUMN];

/**
 * PostgreSQL's naming: quoted identifiers are compared exactly (`Plan` and `plan` are two
 * columns); the empty name, a name with NUL and one longer than 63 bytes cannot be columns.
 */
export const POSTGRES_COLUMN_RULES: ColumnRules = {
  system: SYSTEM_COLUMNS,
  fold: (name) => name,
  usable: (name) => name.length > 0 && !name.includes('\u0000') && Buffer.byteLength(name) <= MAX_IDENT_BYTES,
  typeOf: columnTypeOf,
};
