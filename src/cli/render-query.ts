/** The shape of a query result, loose enough for DuckDB's JSON rows or its native values. */
export interface ResultTable {
  columns: readonly string[];
  rows: ReadonlyArray<readonly unknown[]>;
}

/** Longest cell text in the table view; `--json` has the whole value. */
export const MAX_CELL = 120;

/** JSON.stringify that keeps 64-bit integers exact (as digits) and dates as ISO text. */
export function toJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), indent);
}

/** One cell as one line of text: control characters escaped so a value cannot break the table's rows. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  let text: string;
  if (typeof value === 'string') text = value;
  else if (typeof value === 'bigint' || typeof value === 'number' || typeof value === 'boolean') text = String(value);
  else if (value instanceof Date) text = Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString();
  else if (value instanceof Uint8Array) text = `\\x${Buffer.from(value).toString('hex')}`;
  else text = toJson(value) ?? String(value);
  text = text.replace(/[\u0000-\u001f\u007f]/g, (c) => ({ '\n': '\\n', '\r': '\\r', '\t': '\\t' })[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const chars = [...text];
  return chars.length > MAX_CELL ? `${chars.slice(0, MAX_CELL - 1).join('')}…` : text;
}

const width = (s: string) => [...s].length;
// DuckDB's JSON rows carry BIGINT, HUGEINT and DECIMAL as digit strings, so those count as numbers too.
const isNumeric = (v: unknown) => typeof v === 'number' || typeof v === 'bigint' || (typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v));

/**
 * An aligned text table with a header rule and a row count. Columns whose values are all numbers
 * are right-aligned so digits line up; NULL is spelled out so it differs from an empty string.
 */
export function renderResultTable(result: ResultTable): string {
  const { columns, rows } = result;
  if (columns.length === 0) return '(no columns)';
  const cells = rows.map((r) => columns.map((_, i) => cellText(r[i])));
  const right = columns.map((_, i) => rows.some((r) => isNumeric(r[i])) && rows.every((r) => r[i] === null || r[i] === undefined || isNumeric(r[i])));
  const widths = columns.map((c, i) => Math.max(width(c), ...cells.map((r) => width(r[i]!))));
  const pad = (s: string, i: number) => {
    const fill = ' '.repeat(widths[i]! - width(s));
    return right[i] ? fill + s : s + fill;
  };
  const line = (r: readonly string[]) => r.map(pad).join(' | ').trimEnd();
  const out = [line(columns.map(cellText)), widths.map((w) => '-'.repeat(w)).join('-+-'), ...cells.map(line)];
  out.push(`(${rows.length} row${rows.length === 1 ? '' : 's'})`);
  return out.join('\n');
}
