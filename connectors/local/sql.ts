import type { ColumnType } from '../shared/infer-type';
import type { ColumnRules } from '../shared/column-plan';

/** A quoted identifier: property names become column names verbatim, whatever they contain. */
export const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** A string literal, for the few places DuckDB takes no parameter (COPY targets). */
export const quoteLiteral = (text: string): string => `'${text.replace(/'/g, "''")}'`;

/**
 * DuckDB folds identifiers for comparison ASCII-only: `Plan` and `plan` are one column, while `É`
 * and `é` are two. Measured on DuckDB 1.5.
 */
export const foldIdent = (name: string): string => name.replace(/[A-Z]+/g, (s) => s.toLowerCase());

/** Names DuckDB cannot take as a column even quoted: the empty name and names with NUL. */
export const isUsableIdent = (name: string): boolean => name.length > 0 && !name.includes('\u0000');

export const SQL_TYPE: Readonly<Record<ColumnType, string>> = {
  integer: 'BIGINT',
  hugeint: 'HUGEINT',
  float: 'DOUBLE',
  boolean: 'BOOLEAN',
  string: 'VARCHAR',
  json: 'JSON',
};

/** The column type a DuckDB column holds, or `undefined` for a type Tributary does not write (a column someone added by hand). */
export function columnTypeOf(sqlType: string): ColumnType | undefined {
  switch (sqlType.toUpperCase()) {
    case 'BIGINT':
      return 'integer';
    case 'HUGEINT':
      return 'hugeint';
    case 'DOUBLE':
      return 'float';
    case 'BOOLEAN':
      return 'boolean';
    case 'VARCHAR':
      return 'string';
    case 'JSON':
      return 'json';
    default:
      return undefined;
  }
}

/** DuckDB's naming and types, for the shared column plan. `SYSTEM_COLUMNS` are added by tables.ts. */
export const DUCKDB_NAMING: Omit<ColumnRules, 'system'> = { fold: foldIdent, usable: isUsableIdent, typeOf: columnTypeOf };
