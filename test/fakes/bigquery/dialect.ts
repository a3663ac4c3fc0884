import { invalidQuery } from './errors';
import { quote } from './engine';

/**
 * A small GoogleSQL → DuckDB rewrite, enough for the statements connectors send and tests read
 * with: table paths (`project.dataset.table`, in one or several backtick pairs), backticked
 * identifiers, BigQuery string literals ('…' and "…", with backslash escapes), named (`@name`)
 * and positional (`?`) parameters, `UNNEST(@array)`, type names after `AS`, and a few functions.
 * What it does not know fails loudly rather than running something else.
 */
export type TokenKind = 'ws' | 'comment' | 'string' | 'quoted' | 'word' | 'param' | 'number' | 'punct';

export interface Token {
  kind: TokenKind;
  text: string;
  /** Strings and backticked names: the decoded text. */
  value?: string;
}

const ESCAPES: Readonly<Record<string, string>> = { n: '\n', t: '\t', r: '\r', b: '\b', f: '\f', '\\': '\\', "'": "'", '"': '"', '`': '`', '?': '?', '0': '\0' };

function readQuoted(sql: string, start: number, quoteChar: string, raw: boolean): { end: number; value: string } {
  const triple = sql.startsWith(quoteChar.repeat(3), start);
  const close = triple ? quoteChar.repeat(3) : quoteChar;
  let i = start + close.length;
  let value = '';
  while (i < sql.length) {
    if (sql.startsWith(close, i)) return { end: i + close.length, value };
    const ch = sql[i]!;
    if (ch === '\\' && !raw) {
      const next = sql[i + 1] ?? '';
      if (next === 'u' || next === 'x') {
        const len = next === 'u' ? 4 : 2;
        value += String.fromCharCode(parseInt(sql.slice(i + 2, i + 2 + len), 16));
        i += 2 + len;
        continue;
      }
      value += ESCAPES[next] ?? next;
      i += 2;
      continue;
    }
    if (!triple && ch === '\n') break;
    value += ch;
    i++;
  }
  throw invalidQuery(`Syntax error: Unclosed string literal at [${start}]`);
}

export function tokenize(sql: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < sql.length) {
    const rest = sql.slice(i);
    const ch = sql[i]!;
    let m: RegExpExecArray | null;
    if ((m = /^\s+/.exec(rest))) tokens.push({ kind: 'ws', text: m[0] });
    else if ((m = /^(--|#)[^\n]*/.exec(rest)) || (m = /^\/\*[\s\S]*?\*\//.exec(rest))) tokens.push({ kind: 'comment', text: m[0] });
    else if ((m = /^[rR](?=['"])/.exec(rest)) || ch === "'" || ch === '"') {
      const raw = m !== null;
      const q = readQuoted(sql, i + (raw ? 1 : 0), sql[i + (raw ? 1 : 0)]!, raw);
      tokens.push({ kind: 'string', text: sql.slice(i, q.end), value: q.value });
      i = q.end;
      continue;
    } else if (ch === '`') {
      const q = readQuoted(sql, i, '`', false);
      tokens.push({ kind: 'quoted', text: sql.slice(i, q.end), value: q.value });
      i = q.end;
      continue;
    } else if ((m = /^@[A-Za-z_][A-Za-z0-9_]*/.exec(rest)) || (m = /^\?/.exec(rest))) tokens.push({ kind: 'param', text: m[0] });
    else if ((m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(rest))) tokens.push({ kind: 'word', text: m[0] });
    else if ((m = /^(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/.exec(rest))) tokens.push({ kind: 'number', text: m[0] });
    else if ((m = /^(<=|>=|<>|!=|\|\|)/.exec(rest))) tokens.push({ kind: 'punct', text: m[0] });
    else tokens.push({ kind: 'punct', text: ch });
    i += tokens[tokens.length - 1]!.text.length;
  }
  return tokens;
}

/**
 * The statements of a script, split at the semicolons outside strings and comments
 * (https://cloud.google.com/bigquery/docs/multi-statement-queries); empty ones are dropped.
 */
export function splitStatements(sql: string): string[] {
  const statements: string[] = [];
  let current = '';
  for (const t of tokenize(sql)) {
    if (t.kind === 'punct' && t.text === ';') {
      statements.push(current);
      current = '';
    } else current += t.text;
  }
  statements.push(current);
  return statements.filter((s) => tokenize(s).some((t) => t.kind !== 'ws' && t.kind !== 'comment'));
}

/** BigQuery functions whose DuckDB counterpart has another name (macros are created by the engine). */
const FUNCTIONS: Readonly<Record<string, string>> = {
  JSON_VALUE: 'json_extract_string',
  JSON_EXTRACT_SCALAR: 'json_extract_string',
  JSON_QUERY: 'json_extract',
  JSON_EXTRACT: 'json_extract',
  PARSE_JSON: 'json',
  TO_JSON_STRING: 'bq_to_json_string',
  SAFE_CAST: 'TRY_CAST',
  TIMESTAMP: 'bq_timestamp',
  COUNTIF: 'count_if',
  LOGICAL_AND: 'bool_and',
  LOGICAL_OR: 'bool_or',
  ARRAY_LENGTH: 'len',
  UNIX_MICROS: 'epoch_us',
};

const TYPES: Readonly<Record<string, string>> = {
  INT64: 'BIGINT',
  INTEGER: 'BIGINT',
  FLOAT64: 'DOUBLE',
  BOOL: 'BOOLEAN',
  STRING: 'VARCHAR',
  BYTES: 'BLOB',
  NUMERIC: 'DECIMAL(38, 9)',
  TIMESTAMP: 'TIMESTAMPTZ',
  DATETIME: 'TIMESTAMP',
};

const TABLE_CONTEXT = new Set(['FROM', 'JOIN', 'INTO', 'UPDATE', 'MERGE', 'USING', 'TABLE']);

export interface TableName {
  projectId: string;
  datasetId: string;
  tableId: string;
}

export interface Resolver {
  /** The DuckDB reference of a table path; throws BigQuery's not-found or missing-dataset error. */
  table(parts: string[]): { ref: string; name: TableName };
}

export interface Rewritten {
  sql: string;
  kind: 'SELECT' | 'MERGE' | 'INSERT' | 'UPDATE' | 'DELETE';
  /** Every table the statement names; the first one of a DML statement is its target. */
  tables: TableName[];
  /** Named (or `#index` positional) parameters used as `UNNEST(@p)`: materialized as tables. */
  arrayParams: string[];
  /** MERGE only: its pieces, so that the fake can enforce one source row per target row. */
  merge?: { target: string; targetAlias: string; source: string; on: string };
}

export const paramTable = (name: string): string => quote(`__param_${name}`);

const upper = (t: Token | undefined): string => (t && t.kind === 'word' ? t.text.toUpperCase() : '');

/** Names a `WITH` clause defines (`name AS (`): they are not tables. */
function cteNames(sig: readonly Token[]): Set<string> {
  const names = new Set<string>();
  sig.forEach((t, i) => {
    if (t.kind === 'word' && upper(sig[i + 1]) === 'AS' && sig[i + 2]?.text === '(') names.add(t.text.toUpperCase());
  });
  return names;
}

/** Rewrites one GoogleSQL statement. */
export function rewrite(sql: string, resolver: Resolver): Rewritten {
  const all = tokenize(sql).filter((t) => t.kind !== 'comment');
  while (all.length > 0 && (all[all.length - 1]!.kind === 'ws' || all[all.length - 1]!.text === ';')) all.pop();
  const sig = all.filter((t) => t.kind !== 'ws');
  if (sig.some((t) => t.text === ';')) throw invalidQuery('This fake runs one statement per query; scripts are not supported.');
  const first = upper(sig[0]);
  const kind = first === 'WITH' ? 'SELECT' : first;
  if (!['SELECT', 'MERGE', 'INSERT', 'UPDATE', 'DELETE'].includes(kind)) throw invalidQuery(`Statement ${first || '(empty)'} is not supported by this fake.`);
  const ctes = cteNames(sig);

  const out: string[] = [];
  const tables: TableName[] = [];
  const arrayParams: string[] = [];
  const marks: Record<string, number> = {};
  let depth = 0;
  let positional = 0;
  const seen: Token[] = [];
  const resolve = (parts: string[]) => {
    const { ref, name } = resolver.table(parts);
    tables.push(name);
    out.push(ref);
  };
  for (let i = 0; i < all.length; i++) {
    const t = all[i]!;
    if (t.kind === 'ws') {
      out.push(t.text);
      continue;
    }
    const prev = seen[seen.length - 1];
    const next = all.slice(i + 1).find((x) => x.kind !== 'ws');
    seen.push(t);
    if (t.text === '(') depth++;
    if (t.text === ')') depth--;
    const word = upper(t);
    // `UPDATE` names a table only as the statement's first word, not in MERGE's `THEN UPDATE SET`.
    const tableContext = TABLE_CONTEXT.has(upper(prev)) && !(upper(prev) === 'UPDATE' && seen.length > 2);
    if (depth === 0 && kind === 'MERGE' && ['USING', 'ON', 'WHEN'].includes(word) && marks[word] === undefined) marks[word] = out.length;
    if (t.kind === 'string') out.push(`'${t.value!.replace(/'/g, "''")}'`);
    else if (t.kind === 'param') {
      const inUnnest = prev?.text === '(' && upper(seen[seen.length - 3]) === 'UNNEST';
      if (t.text === '?' && inUnnest) throw invalidQuery('This fake supports UNNEST of named parameters only.');
      if (inUnnest) {
        arrayParams.push(t.text.slice(1));
        out.push(`SELECT * FROM ${paramTable(t.text.slice(1))}`);
      } else out.push(t.text === '?' ? `$${++positional}` : `$${t.text.slice(1)}`);
    } else if (word === 'UNNEST' && next?.text === '(') {
      // `UNNEST(@p)` becomes `(SELECT * FROM "__param_p")`: the parentheses stay, the keyword goes.
    } else if (t.kind === 'quoted' || (t.kind === 'word' && all[i + 1]?.text === '.' && tableContext)) {
      const chain = [t];
      while (all[i + 1]?.text === '.' && (all[i + 2]?.kind === 'quoted' || all[i + 2]?.kind === 'word')) {
        chain.push(all[i + 2]!);
        i += 2;
      }
      const parts = chain.flatMap((c) => (c.kind === 'quoted' ? c.value!.split('.') : [c.text]));
      if (tableContext || (t.kind === 'quoted' && t.value!.includes('.') && chain.length === 1)) resolve(parts);
      else out.push(chain.map((c) => (c.kind === 'quoted' ? quote(c.value!) : c.text)).join('.'));
    } else if (t.kind === 'word') {
      if (word === 'MERGE' && !prev && upper(next) !== 'INTO') {
        out.push('MERGE INTO');
        marks.TARGET = out.length;
      } else if (word === 'INTO' && upper(prev) === 'MERGE') {
        out.push(t.text);
        marks.TARGET = out.length;
      } else if (next?.text === '(' && FUNCTIONS[word]) out.push(FUNCTIONS[word]!);
      else if (upper(prev) === 'AS' && TYPES[word]) out.push(TYPES[word]!);
      else if (word === 'TIMESTAMP' && next?.kind === 'string') out.push('TIMESTAMPTZ');
      else if (tableContext && upper(prev) !== 'USING' && next?.text !== '(' && !['SELECT', 'WITH', 'INTO', 'UNNEST'].includes(word) && !ctes.has(word)) resolve([t.text]);
      else out.push(t.text);
    } else out.push(t.text);
  }
  const result: Rewritten = { sql: out.join(''), kind: kind as Rewritten['kind'], tables, arrayParams };
  if (kind === 'MERGE') {
    const { TARGET: target, USING: u, ON: on, WHEN: when } = marks;
    if (target === undefined || u === undefined || on === undefined || when === undefined) throw invalidQuery('Syntax error: MERGE needs a target and USING, ON and WHEN clauses.');
    const pieces = out.slice(target, u).filter((p) => p.trim() !== '');
    const text = (a: number, b: number) => out.slice(a, b).join('').trim();
    result.merge = { target: text(target, u), targetAlias: pieces[pieces.length - 1]!, source: text(u + 1, on), on: text(on + 1, when) };
  }
  return result;
}
