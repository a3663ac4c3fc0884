import { invalid } from './errors';

/**
 * Column-name rules of https://cloud.google.com/bigquery/docs/schemas#column_names, enforced
 * without flexible column names: letters, digits and underscores, starting with a letter or an
 * underscore, at most 300 characters, none of the reserved prefixes, and no two names that differ
 * only in case ("a column named Column1 is considered identical to a column named column1").
 */
export const MAX_COLUMN_NAME = 300;
export const RESERVED_PREFIXES = ['_TABLE_', '_FILE_', '_PARTITION', '_ROW_TIMESTAMP', '__ROOT__', '_COLIDENTIFIER', '_CHANGE_SEQUENCE_NUMBER', '_CHANGE_TYPE', '_CHANGE_TIMESTAMP'];
/** https://cloud.google.com/bigquery/quotas#table_limits: "Maximum number of columns per table: 10,000". */
export const MAX_COLUMNS = 10_000;

export function checkColumnName(name: unknown): string {
  if (typeof name !== 'string' || name.length === 0) throw invalid('Empty field name');
  if (name.length > MAX_COLUMN_NAME) throw invalid(`Invalid field name "${name.slice(0, 40)}…". Fields must be at most ${MAX_COLUMN_NAME} characters long.`);
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
    throw invalid(`Invalid field name "${name}". Fields must contain only letters, numbers, and underscores, start with a letter or underscore, and be at most ${MAX_COLUMN_NAME} characters long.`);
  }
  const upper = name.toUpperCase();
  const prefix = RESERVED_PREFIXES.find((p) => upper.startsWith(p));
  if (prefix) throw invalid(`Invalid field name "${name}". Field names cannot start with the reserved prefix ${prefix}.`);
  return name;
}

/** Standard SQL names and their legacy spellings, as the API reports them (`INTEGER`, `FLOAT`, `BOOLEAN`). */
const TYPE_NAMES: Readonly<Record<string, string>> = {
  STRING: 'STRING',
  INT64: 'INTEGER',
  INTEGER: 'INTEGER',
  FLOAT64: 'FLOAT',
  FLOAT: 'FLOAT',
  BOOL: 'BOOLEAN',
  BOOLEAN: 'BOOLEAN',
  TIMESTAMP: 'TIMESTAMP',
  JSON: 'JSON',
  BIGNUMERIC: 'BIGNUMERIC',
  BIGDECIMAL: 'BIGNUMERIC',
};

/** The types this fake stores (BIGNUMERIC: whole numbers only). Others (RECORD, NUMERIC, DATE…) are refused rather than faked badly. */
export function canonicalType(type: unknown): string {
  const name = typeof type === 'string' ? TYPE_NAMES[type.toUpperCase()] : undefined;
  if (!name) throw invalid(`Unsupported field type in this fake: ${String(type)}`);
  return name;
}

export const DUCKDB_TYPE: Readonly<Record<string, string>> = {
  STRING: 'VARCHAR',
  INTEGER: 'BIGINT',
  FLOAT: 'DOUBLE',
  BOOLEAN: 'BOOLEAN',
  TIMESTAMP: 'TIMESTAMPTZ',
  JSON: 'JSON',
  // Whole numbers only, up to 38 digits: see toBigNumeric in values.ts.
  BIGNUMERIC: 'DECIMAL(38,0)',
};

export type FieldMode = 'NULLABLE' | 'REQUIRED' | 'REPEATED';

/** A column as tables.get returns it. */
export interface FakeField {
  name: string;
  type: string;
  mode: FieldMode;
  description?: string;
}

export function parseField(raw: unknown): FakeField {
  const f = (raw ?? {}) as Record<string, unknown>;
  const name = checkColumnName(f.name);
  const mode = f.mode === undefined ? 'NULLABLE' : String(f.mode).toUpperCase();
  if (mode !== 'NULLABLE' && mode !== 'REQUIRED') throw invalid(`Unsupported mode in this fake: ${mode}`);
  const field: FakeField = { name, type: canonicalType(f.type), mode };
  if (typeof f.description === 'string') {
    if (f.description.length > 1024) throw invalid(`The description of field ${name} is longer than 1024 characters.`);
    field.description = f.description;
  }
  return field;
}

/** Parses a `schema.fields` list and refuses duplicate names in any case and more than 10 000 columns. */
export function parseFields(raw: unknown): FakeField[] {
  const list = (raw as { fields?: unknown } | undefined)?.fields;
  if (!Array.isArray(list)) return [];
  if (list.length > MAX_COLUMNS) throw invalid(`Too many fields: ${list.length}. The maximum is ${MAX_COLUMNS}.`);
  const fields = list.map(parseField);
  const seen = new Set<string>();
  for (const f of fields) {
    const key = f.name.toLowerCase();
    if (seen.has(key)) throw invalid(`Field ${f.name} already exists in schema`);
    seen.add(key);
  }
  return fields;
}
