import type { RecordKind } from '../../src/core/records/types';
import type { SheetProperties, Sheets } from './client';

/** One tab's id and grid size, as spreadsheets.get answered them and our own writes changed them. */
export interface TabGrid {
  sheetId: number;
  title: string;
  rowCount: number;
  columnCount: number;
}

/**
 * What the writer knows of one of its tabs between flushes. It is a cache: every flush reads the
 * header again, and the key index is checked before it is used.
 */
export interface TabState {
  kind: RecordKind;
  /** The header as last read or written. */
  header: string[] | undefined;
  /** The last row known to hold data (1: only the header). undefined: not looked at yet. */
  endRow: number | undefined;
  /**
   * Set while a flush that appends to this tab has not succeeded: rows after it may hold what that
   * flush appended, so the next flush looks there before appending again.
   */
  checkFrom: number | undefined;
  /** Users and sessions: key → row. */
  index: Map<string, number> | undefined;
  /**
   * Events, once a re-send came (history: a backfill, an import): every `_id` in the tab through
   * `endRow`, read whole once, then kept up with what this writer appends and what the rows after
   * `endRow` hold. A re-send of records older than the tab's last rows is checked against all of it.
   */
  ids: Set<string> | undefined;
  /** Events: a re-send asked for `ids`; every flush of this tab checks against them from then on. */
  wantIds: boolean;
  /**
   * Rows given to records by writes whose answer has not come (lost, timed out, failed): the
   * record is written to the same row when it comes again, and its key leaves once a write of it
   * succeeds or a read finds it there (plan.ts).
   */
  assigned: Map<string, number>;
  /** Made empty by this writer (a spreadsheet it created): nothing is below the header, whatever the grid's size. */
  blank?: boolean;
}

export const newTabState = (kind: RecordKind): TabState => ({ kind, header: undefined, endRow: undefined, checkFrom: undefined, index: undefined, ids: undefined, wantIds: false, assigned: new Map() });

/** The spreadsheet's tabs; names compare case-insensitively, as in Sheets. */
export class Layout {
  private readonly tabs = new Map<string, TabGrid>();

  constructor(readonly title: string) {}

  static from(spreadsheet: Sheets): Layout {
    const layout = new Layout(spreadsheet.properties?.title ?? '');
    for (const sheet of spreadsheet.sheets ?? []) if (sheet.properties) layout.add(sheet.properties);
    return layout;
  }

  add(props: SheetProperties): TabGrid {
    const grid = { sheetId: props.sheetId ?? 0, title: props.title ?? '', rowCount: props.gridProperties?.rowCount ?? 0, columnCount: props.gridProperties?.columnCount ?? 0 };
    this.tabs.set(grid.title.toLowerCase(), grid);
    return grid;
  }

  get(title: string): TabGrid | undefined {
    return this.tabs.get(title.toLowerCase());
  }

  /** Google counts every cell of every tab's grid, empty or not, toward the 10 M limit. */
  get totalCells(): number {
    let n = 0;
    for (const t of this.tabs.values()) n += t.rowCount * t.columnCount;
    return n;
  }

  titles(): string[] {
    return [...this.tabs.values()].map((t) => t.title);
  }
}
