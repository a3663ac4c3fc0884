/**
 * A1 notation as the Sheets API v4 reads it
 * (https://developers.google.com/workspace/sheets/api/guides/concepts#cell): `Sheet1!A1:B2`,
 * `'My tab'!A:A`, `'Jon''s'!A5:C` (open end), `Sheet1!1:1` (whole rows), `Sheet1` (the whole tab),
 * `A1:B2` (the first tab). Rows and columns are 1-based and inclusive; `undefined` means open.
 */
export interface A1Range {
  sheet: string | undefined;
  startRow: number | undefined;
  startCol: number | undefined;
  endRow: number | undefined;
  endCol: number | undefined;
  /** A lone cell (`B2`): a write starting there may cover as many cells as it has values. */
  single?: true;
}

export class A1ParseError extends Error {}

const REF = /^([A-Za-z]{0,3})(\d{0,7})$/;
/** Google leaves sheet names bare only when they cannot be read as anything else. */
const BARE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function columnNumber(letters: string): number {
  let n = 0;
  for (const ch of letters.toUpperCase()) n = n * 26 + (ch.charCodeAt(0) - 64);
  return n;
}

export function columnLetters(n: number): string {
  let s = '';
  for (let x = n; x > 0; x = Math.floor((x - 1) / 26)) s = String.fromCharCode(65 + ((x - 1) % 26)) + s;
  return s;
}

export function quoteSheet(title: string): string {
  const looksLikeRef = /^[A-Za-z]{1,3}\d+$/.test(title) || /^R\d*C\d*$/i.test(title);
  return BARE_NAME.test(title) && !looksLikeRef ? title : `'${title.replace(/'/g, "''")}'`;
}

interface Ref {
  row: number | undefined;
  col: number | undefined;
}

function parseRef(text: string): Ref | undefined {
  const m = REF.exec(text);
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  const col = m[1] ? columnNumber(m[1]) : undefined;
  const row = m[2] ? Number(m[2]) : undefined;
  if (row === 0) return undefined;
  return { row, col };
}

function parseCells(text: string): Omit<A1Range, 'sheet'> | undefined {
  const parts = text.split(':');
  if (parts.length > 2) return undefined;
  const a = parseRef(parts[0]!);
  if (!a) return undefined;
  if (parts.length === 1) {
    // A lone `A` or `5` is a name, not a range; a lone cell needs both.
    if (a.row === undefined || a.col === undefined) return undefined;
    return { startRow: a.row, startCol: a.col, endRow: a.row, endCol: a.col, single: true };
  }
  const b = parseRef(parts[1]!);
  if (!b) return undefined;
  // `A:A` and `1:1` need the same kind on both sides; `A5:C` (open end) is allowed.
  if ((a.col === undefined) !== (b.col === undefined)) return undefined;
  return { startRow: a.row, startCol: a.col, endRow: b.row, endCol: b.col };
}

function splitSheet(text: string): { sheet: string | undefined; cells: string | undefined } {
  if (text.startsWith("'")) {
    let i = 1;
    let name = '';
    for (; i < text.length; i++) {
      if (text[i] === "'") {
        if (text[i + 1] === "'") {
          name += "'";
          i++;
          continue;
        }
        break;
      }
      name += text[i];
    }
    if (i >= text.length) throw new A1ParseError(`Unable to parse range: ${text}`);
    const rest = text.slice(i + 1);
    if (rest === '') return { sheet: name, cells: undefined };
    if (!rest.startsWith('!')) throw new A1ParseError(`Unable to parse range: ${text}`);
    return { sheet: name, cells: rest.slice(1) };
  }
  const bang = text.lastIndexOf('!');
  if (bang >= 0) return { sheet: text.slice(0, bang), cells: text.slice(bang + 1) };
  return { sheet: undefined, cells: text };
}

/** Parses a range; a bare word that is not a cell range is a sheet name (the whole tab). */
export function parseA1(text: string): A1Range {
  if (text === '') throw new A1ParseError('Unable to parse range: ');
  const { sheet, cells } = splitSheet(text);
  const open = { startRow: undefined, startCol: undefined, endRow: undefined, endCol: undefined };
  if (cells === undefined) return { sheet, ...open };
  const parsed = parseCells(cells);
  if (parsed) return { sheet, ...parsed };
  if (sheet === undefined) return { sheet: cells, ...open };
  throw new A1ParseError(`Unable to parse range: ${text}`);
}

/** A1 text of a rectangle on a tab, the way Google writes ranges in its responses. */
export function formatA1(title: string, startRow: number, startCol: number, endRow: number, endCol: number): string {
  const a = `${columnLetters(startCol)}${startRow}`;
  const b = `${columnLetters(endCol)}${endRow}`;
  return `${quoteSheet(title)}!${a === b ? a : `${a}:${b}`}`;
}
