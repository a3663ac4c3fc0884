/**
 * Cells in COPY's text format: tab between cells, newline after a row, `\N` for NULL, and
 * backslash, tab, newline and carriage return escaped.
 *
 * PostgreSQL's `text` and `jsonb` hold no NUL character (U+0000), and `jsonb` refuses the `\u0000`
 * escape: a NUL becomes U+FFFD (the replacement character), in a text cell and inside JSON alike,
 * and the rest of the value is stored as sent. Records hold no lone surrogates (the edge refuses or
 * replaces them), so nothing else needs a change.
 */
const NEEDS_ESCAPE = /[\\\t\n\r\u0000]/;
const ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\u0000': '\uFFFD' };

export function copyCell(text: string | null): string {
  if (text === null) return '\\N';
  return NEEDS_ESCAPE.test(text) ? text.replace(/[\\\t\n\r\u0000]/g, (c) => ESCAPES[c]!) : text;
}

/** Text as PostgreSQL can hold it: each NUL as U+FFFD. */
export function storableText(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
}

/** JSON text with each `\u0000` escape as `\ufffd`; an escaped backslash before `u0000` is left alone. */
export function jsonbText(json: string): string {
  return json.includes('\\u0000') ? json.replace(/(?<!\\)((?:\\\\)*)\\u0000/g, '$1\\ufffd') : json;
}

/** One row: its cells in column order. */
export function copyRow(cells: ReadonlyArray<string | null>): string {
  let line = '';
  for (let i = 0; i < cells.length; i++) line += (i === 0 ? '' : '\t') + copyCell(cells[i]!);
  return `${line}\n`;
}
