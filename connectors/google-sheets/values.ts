import { stringifyExactJson } from '../../src/core/records/exact-json';
import type { JsonValue } from '../../src/core/records/types';
import type { CellValue } from './client';

/** Google: "Your input contains more than the maximum of 50000 characters in a single cell." */
export const CELL_CHARACTER_LIMIT = 50_000;

/** Ends a cut string, so that a reader sees that the cell holds only the start of the value. */
export const TRUNCATION_MARKER = '…[truncated]';

/**
 * Strings longer than Google's cell limit keep their first characters and end with the marker,
 * 50 000 characters in all. Counted in UTF-16 units, which is never fewer than Google's count, and
 * never cut inside a surrogate pair.
 */
export function fitCell(text: string): string {
  if (text.length <= CELL_CHARACTER_LIMIT) return text;
  let cut = CELL_CHARACTER_LIMIT - TRUNCATION_MARKER.length;
  const last = text.charCodeAt(cut - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut--;
  return text.slice(0, cut) + TRUNCATION_MARKER;
}

/**
 * A property value as a cell (written with valueInputOption=RAW): numbers and booleans keep their
 * type, strings stay text (`=IMPORTXML(…)` and `00123` included), objects and arrays become compact
 * JSON text. A whole number beyond 2^53 (a bigint) is written as text with its digits: a cell's
 * number is a double, which would round it, and RAW keeps text as text. `null` has no cell value:
 * the caller decides whether it skips or clears.
 */
export function cellValue(value: JsonValue): CellValue | null {
  if (value === null) return null;
  if (typeof value === 'number' || typeof value === 'boolean') return value;
  if (typeof value === 'bigint') return value.toString();
  return fitCell(typeof value === 'string' ? value : stringifyExactJson(value));
}
