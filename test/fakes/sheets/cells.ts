import { invalidArgument } from './errors';

/** One stored cell: a string, number or boolean value, or a formula (only USER_ENTERED makes those). */
export type Cell = { t: 's'; v: string } | { t: 'n'; v: number } | { t: 'b'; v: boolean } | { t: 'f'; v: string };

export type ValueInputOption = 'RAW' | 'USER_ENTERED';
export type ValueRenderOption = 'FORMATTED_VALUE' | 'UNFORMATTED_VALUE' | 'FORMULA';
export type RenderedValue = string | number | boolean;

/** Google: "Your input contains more than the maximum of 50000 characters in a single cell." */
export const MAX_CELL_CHARS = 50_000;

/** What writing one input value does: set a cell, clear it (`""`), or leave it alone (`null`). */
export type CellWrite = { op: 'set'; cell: Cell } | { op: 'clear' } | { op: 'skip' };

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/**
 * Input values as the API documents them
 * (https://developers.google.com/workspace/sheets/api/reference/rest/v4/spreadsheets.values#ValueRange):
 * bool, string and double; "Null values will be skipped. To set a cell to an empty value, set the
 * string value to an empty string." RAW stores strings as they are (so `=1+1` stays text);
 * USER_ENTERED parses them as if typed into the UI.
 */
export function toCellWrite(value: unknown, option: ValueInputOption, where: string): CellWrite {
  if (value === null || value === undefined) return { op: 'skip' };
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw invalidArgument(`Invalid ${where}: number_value is not finite`);
    return { op: 'set', cell: { t: 'n', v: value } };
  }
  if (typeof value === 'boolean') return { op: 'set', cell: { t: 'b', v: value } };
  if (typeof value !== 'string') throw invalidArgument(`Invalid ${where}: struct_value ${JSON.stringify(value).slice(0, 80)}`);
  if (value.length > MAX_CELL_CHARS) throw invalidArgument(`Your input contains more than the maximum of ${MAX_CELL_CHARS} characters in a single cell.`);
  if (value === '') return { op: 'clear' };
  if (option === 'RAW') return { op: 'set', cell: { t: 's', v: value } };
  if (value.startsWith('=')) return { op: 'set', cell: { t: 'f', v: value } };
  if (value.startsWith("'")) return { op: 'set', cell: { t: 's', v: value.slice(1) } };
  if (NUMBER.test(value.trim())) return { op: 'set', cell: { t: 'n', v: Number(value) } };
  if (/^(true|false)$/i.test(value)) return { op: 'set', cell: { t: 'b', v: value.toUpperCase() === 'TRUE' } };
  return { op: 'set', cell: { t: 's', v: value } };
}

/**
 * A cell as values.get renders it. The fake evaluates no formulas: FORMATTED_VALUE and
 * UNFORMATTED_VALUE show `#FORMULA` for them, so a test can tell a formula from text.
 */
export function renderCell(cell: Cell | undefined, option: ValueRenderOption): RenderedValue {
  if (!cell) return '';
  switch (cell.t) {
    case 's':
      return cell.v;
    case 'f':
      return option === 'FORMULA' ? cell.v : '#FORMULA';
    case 'n':
      return option === 'FORMATTED_VALUE' ? String(cell.v) : cell.v;
    case 'b':
      return option === 'FORMATTED_VALUE' ? (cell.v ? 'TRUE' : 'FALSE') : cell.v;
  }
}
