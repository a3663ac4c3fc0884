import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import { paramTable } from './dialect';
import { invalidQuery } from './errors';
import { canonicalType, DUCKDB_TYPE } from './names';
import { toCell, ValueError, type Cell } from './values';

/** A query parameter as jobs.query receives it (https://cloud.google.com/bigquery/docs/reference/rest/v2/QueryParameter). */
export interface QueryParameter {
  name?: string;
  parameterType?: { type?: string; arrayType?: QueryParameter['parameterType']; structTypes?: Array<{ name?: string; type?: QueryParameter['parameterType'] }> };
  parameterValue?: { value?: unknown; arrayValues?: Array<NonNullable<QueryParameter['parameterValue']>>; structValues?: Record<string, NonNullable<QueryParameter['parameterValue']>> };
}

function cell(type: string | undefined, value: unknown, name: string): Cell {
  try {
    return toCell(canonicalType(type === 'BOOL' ? 'BOOLEAN' : type), value);
  } catch (err) {
    if (err instanceof ValueError) throw invalidQuery(`Invalid value for query parameter ${name}: ${err.message}`);
    throw invalidQuery(`Query parameter ${name} has a type this fake does not support: ${String(type)}`);
  }
}

/** Scalar parameters as DuckDB named values (`$name`); positional ones as an array. */
export function scalarValues(params: readonly QueryParameter[], arrays: ReadonlySet<string>): DuckDBValue[] | Record<string, DuckDBValue> {
  const scalars = params.filter((p) => !arrays.has(p.name ?? ''));
  for (const p of scalars) {
    if (p.parameterType?.type === 'ARRAY' || p.parameterType?.type === 'STRUCT') throw invalidQuery(`This fake supports array parameters only as UNNEST(@${p.name ?? '?'}).`);
  }
  const values = scalars.map((p) => cell(p.parameterType?.type, p.parameterValue?.value, p.name ?? '?') as DuckDBValue);
  if (scalars.every((p) => p.name === undefined)) return values;
  return Object.fromEntries(scalars.map((p, i) => [p.name!, values[i]!]));
}

/**
 * Materializes an ARRAY parameter used as `UNNEST(@name)` as a temp table: one column per STRUCT
 * field (named as the field), or one column `v` for an array of scalars.
 */
export async function createParamTable(conn: DuckDBConnection, param: QueryParameter): Promise<void> {
  const name = param.name ?? '';
  const element = param.parameterType?.arrayType;
  if (param.parameterType?.type !== 'ARRAY' || !element) throw invalidQuery(`Query parameter ${name} is used in UNNEST but is not an ARRAY.`);
  const columns = element.type === 'STRUCT' ? (element.structTypes ?? []).map((f) => ({ name: f.name ?? '', type: f.type?.type })) : [{ name: 'v', type: element.type }];
  const types = columns.map((c) => canonicalTypeOrFail(c.type, name));
  const defs = columns.map((c, i) => `"${c.name.replace(/"/g, '""')}" ${DUCKDB_TYPE[types[i]!]}`);
  await conn.run(`CREATE OR REPLACE TEMP TABLE ${paramTable(name)} (${defs.join(', ')})`);
  const appender = await conn.createAppender(`__param_${name}`, 'main', 'temp');
  try {
    for (const item of param.parameterValue?.arrayValues ?? []) {
      columns.forEach((c, i) => {
        const raw = element.type === 'STRUCT' ? item.structValues?.[c.name]?.value : item.value;
        const v = cell(types[i], raw, `${name}.${c.name}`);
        if (v === null) appender.appendNull();
        else if (typeof v === 'bigint') appender.appendBigInt(v);
        else if (typeof v === 'number') appender.appendDouble(v);
        else if (typeof v === 'boolean') appender.appendBoolean(v);
        else appender.appendVarchar(v);
      });
      appender.endRow();
    }
  } finally {
    appender.closeSync();
  }
}

function canonicalTypeOrFail(type: string | undefined, name: string): string {
  try {
    return canonicalType(type);
  } catch {
    throw invalidQuery(`Query parameter ${name} has a field type this fake does not support: ${String(type)}`);
  }
}

export async function dropParamTables(conn: DuckDBConnection, names: readonly string[]): Promise<void> {
  for (const name of names) await conn.run(`DROP TABLE IF EXISTS ${paramTable(name)}`);
}
