import type { CellValue } from './client';

/** Column number (1-based) of each header name; the first of two equal names wins. */
export function columnsOf(header: readonly string[]): Map<string, number> {
  const cols = new Map<string, number>();
  header.forEach((name, i) => {
    if (name !== '' && !cols.has(name)) cols.set(name, i + 1);
  });
  return cols;
}

/** The header as read back: cells as text; a blank cell keeps its place. */
export function readHeader(row: readonly CellValue[] | undefined): string[] {
  return (row ?? []).map((v) => String(v));
}

export interface HeaderChange {
  /** The header after the change. */
  header: string[];
  /** Names written right of the existing header, from column `from`. */
  added: { from: number; names: string[] } | undefined;
}

/**
 * Existing columns never move: people may reorder, hide or add columns, and rename ours. Names
 * the data needs and the header lacks are added at the right, in the order given.
 */
export function evolveHeader(current: readonly string[], wanted: Iterable<string>): HeaderChange {
  const present = new Set(current);
  const names: string[] = [];
  for (const name of wanted) {
    if (present.has(name)) continue;
    present.add(name);
    names.push(name);
  }
  return { header: [...current, ...names], added: names.length > 0 ? { from: current.length + 1, names } : undefined };
}
