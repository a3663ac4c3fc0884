import type { Cell, RenderedValue, ValueRenderOption } from './cells';
import { renderCell } from './cells';

export interface GridProperties {
  rowCount: number;
  columnCount: number;
  frozenRowCount?: number;
  frozenColumnCount?: number;
}

/** SheetProperties as the API returns them (the fields the fake keeps). */
export interface SheetProperties {
  sheetId: number;
  title: string;
  index: number;
  sheetType: 'GRID';
  gridProperties: GridProperties;
}

/** A rectangle on a tab, 1-based and inclusive. */
export interface Rect {
  r1: number;
  c1: number;
  r2: number;
  c2: number;
}

type Row = Array<Cell | undefined>;

/** One tab: its properties and its cells, rows stored sparsely (`undefined` for a blank row). */
export class Sheet {
  rows: Array<Row | undefined> = [];

  constructor(public props: SheetProperties) {}

  get title(): string {
    return this.props.title;
  }
  get rowCount(): number {
    return this.props.gridProperties.rowCount;
  }
  get columnCount(): number {
    return this.props.gridProperties.columnCount;
  }
  get cellCount(): number {
    return this.rowCount * this.columnCount;
  }

  cell(row: number, col: number): Cell | undefined {
    return this.rows[row - 1]?.[col - 1];
  }

  set(row: number, col: number, cell: Cell | undefined): void {
    let r = this.rows[row - 1];
    if (!r) {
      if (!cell) return;
      r = this.rows[row - 1] = [];
    }
    r[col - 1] = cell;
  }

  private rowHasData(row: number, c1: number, c2: number): boolean {
    const r = this.rows[row - 1];
    if (!r) return false;
    for (let c = c1; c <= Math.min(c2, r.length); c++) if (r[c - 1]) return true;
    return false;
  }

  /** The first and last rows at or after `from` holding a value in columns c1..c2, or undefined. */
  dataRows(from: number, c1: number, c2: number): { first: number; last: number } | undefined {
    let last = 0;
    for (let row = Math.min(this.rows.length, this.rowCount); row >= from; row--) {
      if (this.rowHasData(row, c1, c2)) {
        last = row;
        break;
      }
    }
    if (last === 0) return undefined;
    let first = from;
    while (!this.rowHasData(first, c1, c2)) first++;
    return { first, last };
  }

  /** Values of a rectangle with Google's trimming: no trailing blank rows, no trailing blank cells in a row. */
  read(rect: Rect, render: ValueRenderOption): RenderedValue[][] {
    const out: RenderedValue[][] = [];
    const lastRow = Math.min(rect.r2, this.rows.length);
    for (let row = rect.r1; row <= lastRow; row++) {
      const r = this.rows[row - 1];
      const values: RenderedValue[] = [];
      if (r) {
        const lastCol = Math.min(rect.c2, r.length);
        for (let col = rect.c1; col <= lastCol; col++) values.push(renderCell(r[col - 1], render));
        while (values.length > 0 && values[values.length - 1] === '') values.pop();
      }
      out.push(values);
    }
    while (out.length > 0 && out[out.length - 1]!.length === 0) out.pop();
    return out;
  }

  /** Inserts `count` blank rows so that the first of them is row `at`; the grid grows. */
  insertRows(at: number, count: number): void {
    // Rows past the last stored one are blank already; only rows below the insertion point move.
    if (at - 1 < this.rows.length) {
      const below = this.rows.splice(at - 1);
      this.rows.length = at - 1 + count;
      for (const row of below) this.rows.push(row);
    }
    this.props.gridProperties.rowCount += count;
  }

  deleteRows(at: number, count: number): void {
    this.rows.splice(at - 1, count);
    this.props.gridProperties.rowCount -= count;
  }

  insertColumns(at: number, count: number): void {
    this.rows = this.rows.map((r) => (r && r.length >= at ? [...r.slice(0, at - 1), ...new Array<Cell | undefined>(count), ...r.slice(at - 1)] : r));
    this.props.gridProperties.columnCount += count;
  }

  deleteColumns(at: number, count: number): void {
    this.rows = this.rows.map((r) => (r ? [...r.slice(0, at - 1), ...r.slice(at - 1 + count)] : r));
    this.props.gridProperties.columnCount -= count;
  }

  /** Moves a column as a person dragging it in the UI does (1-based, `to` is the final position). */
  moveColumn(from: number, to: number): void {
    this.rows = this.rows.map((r) => {
      if (!r) return r;
      const copy = [...r];
      while (copy.length < Math.max(from, to)) copy.push(undefined);
      const [cell] = copy.splice(from - 1, 1);
      copy.splice(to - 1, 0, cell);
      return copy;
    });
  }

  clone(): Sheet {
    const copy = new Sheet(structuredClone(this.props));
    copy.rows = [...this.rows];
    return copy;
  }
}
