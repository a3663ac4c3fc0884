/**
 * A1 notation (https://developers.google.com/workspace/sheets/api/guides/concepts#cell). Sheet
 * names are always quoted, with `'` doubled, which Google accepts for any name: `'events'!A1`.
 */
export function quoteSheet(title: string): string {
  return `'${title.replace(/'/g, "''")}'`;
}

/** 1 → A, 26 → Z, 27 → AA. */
export function columnLetters(n: number): string {
  let s = '';
  for (let x = n; x > 0; x = Math.floor((x - 1) / 26)) s = String.fromCharCode(65 + ((x - 1) % 26)) + s;
  return s;
}

/** Row `row` from column `c1` to `c2`. */
export const rowRange = (title: string, row: number, c1: number, c2: number) => `${quoteSheet(title)}!${columnLetters(c1)}${row}:${columnLetters(c2)}${row}`;

/** Rows `r1`..`r2` of one column. */
export const columnRange = (title: string, col: number, r1: number, r2: number) => `${quoteSheet(title)}!${columnLetters(col)}${r1}:${columnLetters(col)}${r2}`;

/** The header row, however wide. */
export const headerRange = (title: string) => `${quoteSheet(title)}!1:1`;

/** Rows `r1`..`r2`, columns A..`lastCol`. */
export const rowsRange = (title: string, r1: number, r2: number, lastCol: number) => `${quoteSheet(title)}!A${r1}:${columnLetters(lastCol)}${r2}`;
