import { A1ParseError, formatA1, parseA1 } from './a1';
import { toCellWrite, type CellWrite, type RenderedValue, type ValueInputOption, type ValueRenderOption } from './cells';
import { invalidArgument } from './errors';
import type { DeveloperMetadata } from './metadata';
import { Sheet, type Rect, type SheetProperties } from './sheet';

export type MajorDimension = 'ROWS' | 'COLUMNS';

export interface ValueRange {
  range?: string;
  majorDimension?: MajorDimension;
  values?: unknown[][];
}

export interface UpdateValuesResponse {
  spreadsheetId: string;
  updatedRange: string;
  updatedRows: number;
  updatedColumns: number;
  updatedCells: number;
}

/** Google's limit: "up to 10 million cells" per spreadsheet, counting every cell of every tab's grid. */
export const GOOGLE_CELL_LIMIT = 10_000_000;

export interface Target {
  sheet: Sheet;
  rect: Rect;
  /** Whether the range named its last row / column, rather than leaving them open. */
  closed: { row: boolean; col: boolean };
}

export const widthOf = (rows: readonly unknown[][]) => rows.reduce((w, r) => Math.max(w, r.length), 0);

function transpose(values: unknown[][]): unknown[][] {
  const width = widthOf(values);
  return Array.from({ length: width }, (_, c) => values.map((r) => r[c]));
}

export function gridLimitError(range: string, sheet: Sheet) {
  return invalidArgument(`Range (${range}) exceeds grid limits. Max rows: ${sheet.rowCount}, max columns: ${sheet.columnCount}`);
}

/** One spreadsheet: its tabs and the values operations of `spreadsheets.values`. */
export class Spreadsheet {
  sheets: Sheet[] = [];
  nextSheetId = 0;
  /** Spreadsheet-level developer metadata (metadata.ts). */
  developerMetadata: DeveloperMetadata[] = [];
  nextMetadataId = 1;

  constructor(
    readonly id: string,
    public title: string,
    readonly cellLimit: number,
  ) {}

  get totalCells(): number {
    return this.sheets.reduce((n, s) => n + s.cellCount, 0);
  }

  /** Sheet names compare case-insensitively in Sheets. */
  sheetByTitle(title: string): Sheet | undefined {
    const lower = title.toLowerCase();
    return this.sheets.find((s) => s.title.toLowerCase() === lower);
  }

  addSheet(props: Partial<SheetProperties> & { title: string }): Sheet {
    const sheetId = props.sheetId ?? this.nextSheetId++;
    const sheet = new Sheet({
      sheetId,
      title: props.title,
      index: props.index ?? this.sheets.length,
      sheetType: 'GRID',
      gridProperties: { rowCount: 1000, columnCount: 26, ...props.gridProperties },
    });
    this.sheets.push(sheet);
    this.sheets.sort((a, b) => a.props.index - b.props.index);
    this.sheets.forEach((s, i) => (s.props.index = i));
    return sheet;
  }

  checkCellLimit(extra: number): void {
    if (this.totalCells + extra > this.cellLimit) {
      throw invalidArgument(`This action would increase the number of cells in the workbook above the limit of ${this.cellLimit} cells.`);
    }
  }

  /** Resolves a range; explicit bounds beyond the grid are refused, open ends stop at the grid. */
  target(range: string): Target {
    let a1;
    try {
      a1 = parseA1(range);
    } catch (err) {
      if (err instanceof A1ParseError) throw invalidArgument(err.message);
      throw err;
    }
    const sheet = a1.sheet === undefined ? this.sheets[0] : this.sheetByTitle(a1.sheet);
    if (!sheet) throw invalidArgument(`Unable to parse range: ${range}`);
    const rect = { r1: a1.startRow ?? 1, c1: a1.startCol ?? 1, r2: a1.endRow ?? sheet.rowCount, c2: a1.endCol ?? sheet.columnCount };
    const closed = { row: a1.endRow !== undefined && !a1.single, col: a1.endCol !== undefined && !a1.single };
    if (rect.r1 > sheet.rowCount || rect.c1 > sheet.columnCount || rect.r2 > sheet.rowCount || rect.c2 > sheet.columnCount) {
      throw gridLimitError(range, sheet);
    }
    return { sheet, rect, closed };
  }

  getValues(range: string, render: ValueRenderOption, major: MajorDimension = 'ROWS'): ValueRange {
    const { sheet, rect } = this.target(range);
    const rows = sheet.read(rect, render);
    const values: RenderedValue[][] = major === 'COLUMNS' ? (transpose(rows) as RenderedValue[][]) : rows;
    return { range: formatA1(sheet.title, rect.r1, rect.c1, rect.r2, rect.c2), majorDimension: major, ...(values.length > 0 ? { values } : {}) };
  }

  /** Checks and converts a whole write first, so that a refused request changes nothing. */
  prepareWrite(vr: ValueRange, option: ValueInputOption, where: string): { target: Target; writes: CellWrite[][] } {
    if (!vr.range) throw invalidArgument(`${where}: range is required`);
    const target = this.target(vr.range);
    const rows = vr.majorDimension === 'COLUMNS' ? transpose(vr.values ?? []) : (vr.values ?? []);
    const width = widthOf(rows);
    const { rect, closed, sheet } = target;
    if (rows.length > 0 && closed.row && rect.r1 + rows.length - 1 > rect.r2) {
      throw invalidArgument(`Requested writing within range [${vr.range}], but tried writing to row [${rect.r1 + rows.length - 1}]`);
    }
    if (width > 0 && closed.col && rect.c1 + width - 1 > rect.c2) {
      throw invalidArgument(`Requested writing within range [${vr.range}], but tried writing to column [${rect.c1 + width - 1}]`);
    }
    if (rect.r1 + rows.length - 1 > sheet.rowCount || rect.c1 + width - 1 > sheet.columnCount) throw gridLimitError(vr.range, sheet);
    const writes = rows.map((row, r) => row.map((value, c) => toCellWrite(value, option, `values[${r}][${c}]`)));
    return { target, writes };
  }

  applyWrite({ target, writes }: { target: Target; writes: CellWrite[][] }, startRow = target.rect.r1): UpdateValuesResponse {
    const { sheet, rect } = target;
    let cells = 0;
    let width = 0;
    writes.forEach((row, r) => {
      width = Math.max(width, row.length);
      row.forEach((w, c) => {
        if (w.op === 'skip') return;
        cells++;
        sheet.set(startRow + r, rect.c1 + c, w.op === 'set' ? w.cell : undefined);
      });
    });
    const rowsWritten = writes.length;
    return {
      spreadsheetId: this.id,
      updatedRange: formatA1(sheet.title, startRow, rect.c1, startRow + Math.max(rowsWritten, 1) - 1, rect.c1 + Math.max(width, 1) - 1),
      updatedRows: rowsWritten,
      updatedColumns: width,
      updatedCells: cells,
    };
  }

  clear(range: string): string {
    const { sheet, rect } = this.target(range);
    for (let row = rect.r1; row <= Math.min(rect.r2, sheet.rows.length); row++) {
      for (let col = rect.c1; col <= rect.c2; col++) sheet.set(row, col, undefined);
    }
    return formatA1(sheet.title, rect.r1, rect.c1, rect.r2, rect.c2);
  }
}
