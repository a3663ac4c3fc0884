/**
 * A row must fit in one 8 KB page: PostgreSQL refuses a larger one ("row is too big", SQLSTATE
 * 54000) for the whole statement. Long text and JSON are moved out of the row (TOAST), but a
 * `bigint` or `double precision` always takes its 8 bytes in it, so a record with a thousand numbers
 * (a user whose properties grew over the years) would not fit. Such a row keeps the property cells
 * that surely fit, in table order; the others are NULL, their values in `_properties` as every
 * value that finds no column.
 */

/** MaxHeapTupleSize: an 8 KB page less its header and one line pointer. */
const MAX_TUPLE_BYTES = 8160;
/** The tuple header with a null bitmap for 1 600 columns, aligned (t_hoff). */
const MAX_HEADER_BYTES = 224;
/**
 * The most a text, jsonb or numeric value takes in the row once TOAST has done its work: values
 * larger than this (MAXALIGN of the 18-byte pointer) are compressed or moved out of the row.
 */
const MAX_INLINE_VARLENA_BYTES = 24;
/** Bytes the cells of one row may take, with room for what this estimate does not count. */
export const ROW_DATA_BUDGET = MAX_TUPLE_BYTES - MAX_HEADER_BYTES - 64;

const FIXED_WIDTH: Readonly<Record<string, number>> = { bigint: 8, 'double precision': 8, timestamptz: 8, boolean: 1 };

/** An upper bound of the bytes a cell adds to a row that is `offset` bytes long so far. */
function cellEnd(offset: number, sqlType: string, cell: string): number {
  const width = FIXED_WIDTH[sqlType];
  if (width !== undefined) return width === 8 ? Math.ceil(offset / 8) * 8 + 8 : offset + width;
  // A short value is stored with a 1-byte header and no alignment; jsonb's binary form can be larger than its text.
  const bytes = sqlType === 'text' ? Buffer.byteLength(cell) + 1 : MAX_INLINE_VARLENA_BYTES;
  return offset + Math.min(bytes, MAX_INLINE_VARLENA_BYTES);
}

/**
 * The cells, with property cells (from index `firstProperty` on) set to NULL where the row would
 * otherwise exceed {@link ROW_DATA_BUDGET}. Returns the same array when it fits, as nearly every row does.
 */
export function fitRow(sqlTypes: readonly string[], cells: ReadonlyArray<string | null>, firstProperty: number, budget = ROW_DATA_BUDGET): ReadonlyArray<string | null> {
  // No cell takes more than MAX_INLINE_VARLENA_BYTES: a row of a few hundred columns always fits.
  if (cells.length * MAX_INLINE_VARLENA_BYTES <= budget) return cells;
  let offset = 0;
  let fitted: Array<string | null> | undefined;
  for (let i = 0; i < cells.length; i++) {
    const cell = cells[i];
    if (cell === null || cell === undefined) continue;
    const end = cellEnd(offset, sqlTypes[i]!, cell);
    if (end > budget && i >= firstProperty) {
      (fitted ??= [...cells])[i] = null;
      continue;
    }
    offset = end;
  }
  return fitted ?? cells;
}
