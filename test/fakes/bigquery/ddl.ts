import { tokenize, type TableName, type Token } from './dialect';
import { invalidQuery } from './errors';
import { canonicalType } from './names';

/**
 * `ALTER TABLE [IF EXISTS] path ALTER COLUMN [IF EXISTS] name SET DATA TYPE type [, ALTER COLUMN …]`,
 * the one DDL statement the fake runs: BigQuery changes a column's type this way only
 * (https://cloud.google.com/bigquery/docs/managing-table-schemas#change_a_columns_data_type);
 * tables.patch with another type is refused ("Field x has changed type from INTEGER to FLOAT").
 */
export interface AlterColumns {
  table: string[];
  ifTableExists: boolean;
  changes: Array<{ column: string; ifExists: boolean; type: string }>;
}

/**
 * Coercions SET DATA TYPE allows (the DDL reference's list): INT64 to NUMERIC, BIGNUMERIC or
 * FLOAT64, NUMERIC to BIGNUMERIC or FLOAT64. Coercible in a query is not enough: BIGNUMERIC to
 * FLOAT64 is refused. NUMERIC is not among the types this fake stores.
 */
const WIDENINGS: Readonly<Record<string, readonly string[]>> = { INTEGER: ['FLOAT', 'BIGNUMERIC'] };

/** Standard SQL names, as DDL messages use them. */
const STANDARD: Readonly<Record<string, string>> = { INTEGER: 'INT64', FLOAT: 'FLOAT64', BOOLEAN: 'BOOL' };
export const standardName = (canonical: string): string => STANDARD[canonical] ?? canonical;

export function isAlterTable(sql: string): boolean {
  return /^\s*ALTER\s+TABLE\b/i.test(sql.replace(/^(\s|--[^\n]*\n|#[^\n]*\n|\/\*[\s\S]*?\*\/)*/, ''));
}

/** Parses the statement, or refuses it with BigQuery's syntax-error shape. */
export function parseAlterColumns(sql: string): AlterColumns {
  const tokens = tokenize(sql).filter((t) => t.kind !== 'ws' && t.kind !== 'comment');
  while (tokens[tokens.length - 1]?.text === ';') tokens.pop();
  let i = 0;
  const peek = (): Token | undefined => tokens[i];
  const word = (t: Token | undefined) => (t?.kind === 'word' ? t.text.toUpperCase() : '');
  const expect = (...words: string[]) => {
    for (const w of words) {
      if (word(peek()) !== w) throw invalidQuery(`Syntax error: Expected keyword ${w} but got ${peek()?.text ?? 'end of input'}`);
      i++;
    }
  };
  const optional = (...words: string[]) => {
    if (words.every((w, k) => word(tokens[i + k]) === w)) {
      i += words.length;
      return true;
    }
    return false;
  };
  const name = (): string[] => {
    const read = readName(tokens, i);
    i = read.next;
    return read.parts;
  };
  expect('ALTER', 'TABLE');
  const ifTableExists = optional('IF', 'EXISTS');
  const table = name();
  const changes: AlterColumns['changes'] = [];
  do {
    if (word(peek()) !== 'ALTER') throw invalidQuery(`ALTER TABLE ${peek()?.text ?? ''}… is not supported by this fake: only ALTER COLUMN … SET DATA TYPE`);
    expect('ALTER', 'COLUMN');
    const ifExists = optional('IF', 'EXISTS');
    const [column] = name();
    expect('SET', 'DATA', 'TYPE');
    const type = tokens[i++];
    if (type?.kind !== 'word') throw invalidQuery(`Syntax error: Expected a type but got ${type?.text ?? 'end of input'}`);
    changes.push({ column: column!, ifExists, type: type.text });
  } while (peek()?.text === ',' && ++i);
  if (i < tokens.length) throw invalidQuery(`Syntax error: Unexpected ${tokens[i]!.text}`);
  return { table, ifTableExists, changes };
}

/**
 * Checks one change against a column of canonical type `from`; returns the new canonical type.
 * A change that is not a listed widening is refused as BigQuery refuses it.
 */
export function checkWidening(where: TableName, column: string, from: string, to: string): string {
  let target: string;
  try {
    target = canonicalType(to);
  } catch {
    throw invalidQuery(`Unsupported type in this fake's SET DATA TYPE: ${to}`);
  }
  if (target === from || WIDENINGS[from]?.includes(target)) return target;
  if (target === 'STRING' || from === 'STRING') {
    throw invalidQuery(`ALTER TABLE ALTER COLUMN SET DATA TYPE on column ${column}: existing column type ${standardName(from)} is not assignable to ${standardName(target)}`);
  }
  // What BigQuery answers for a change between numeric types that is not a widening (BIGNUMERIC to FLOAT64).
  throw invalidQuery(`Provided Schema does not match Table ${where.projectId}:${where.datasetId}.${where.tableId}. Field ${column} has changed type from ${from} to ${target}`);
}

/** `DROP TABLE [IF EXISTS] path`, as a script drops a table it staged. */
export interface DropTable {
  table: string[];
  ifExists: boolean;
}

export function isDropTable(sql: string): boolean {
  return /^\s*DROP\s+TABLE\b/i.test(sql.replace(/^(\s|--[^\n]*\n|#[^\n]*\n|\/\*[\s\S]*?\*\/)*/, ''));
}

export function parseDropTable(sql: string): DropTable {
  const tokens = tokenize(sql).filter((t) => t.kind !== 'ws' && t.kind !== 'comment');
  const word = (t: Token | undefined) => (t?.kind === 'word' ? t.text.toUpperCase() : '');
  let i = 2;
  const ifExists = word(tokens[2]) === 'IF' && word(tokens[3]) === 'EXISTS';
  if (ifExists) i = 4;
  const { parts, next } = readName(tokens, i);
  if (next < tokens.length) throw invalidQuery(`Syntax error: Unexpected ${tokens[next]!.text}`);
  return { table: parts, ifExists };
}

/** A dotted name from token `i` (a backticked part may hold dots itself): its parts, and the index after it. */
function readName(tokens: readonly Token[], start: number): { parts: string[]; next: number } {
  const parts: string[] = [];
  let i = start;
  for (;;) {
    const t = tokens[i++];
    if (t?.kind === 'quoted') parts.push(...t.value!.split('.'));
    else if (t?.kind === 'word') parts.push(t.text);
    else throw invalidQuery(`Syntax error: Unexpected ${t?.text ?? 'end of input'}`);
    if (tokens[i]?.text !== '.') return { parts, next: i };
    i++;
  }
}
