import { formatA1 } from './a1';
import { toCellWrite, type ValueInputOption } from './cells';
import { invalidArgument } from './errors';
import { widthOf, type Spreadsheet, type UpdateValuesResponse, type ValueRange } from './spreadsheet';

export type InsertDataOption = 'OVERWRITE' | 'INSERT_ROWS';

export interface AppendValuesResponse {
  spreadsheetId: string;
  tableRange?: string;
  updates: UpdateValuesResponse;
}

/**
 * values.append (https://developers.google.com/workspace/sheets/api/reference/rest/v4/spreadsheets.values/append):
 * the range is searched for a table (here: from its first to its last row holding a value in the
 * range's columns) and the values go to the rows right after it, from the range's first column.
 * INSERT_ROWS inserts rows for them; OVERWRITE writes over what is there. Either way the grid grows
 * when the data reaches past its end ("adding data to the end of the sheet will still insert new
 * rows or columns so the data can be written").
 */
export function appendValues(ss: Spreadsheet, range: string, body: ValueRange, option: ValueInputOption, insert: InsertDataOption): AppendValuesResponse {
  const target = ss.target(range);
  const { sheet, rect } = target;
  const rows = body.majorDimension === 'COLUMNS' ? null : (body.values ?? []);
  if (rows === null) throw invalidArgument('The fake appends ROWS only');
  const table = sheet.dataRows(rect.r1, rect.c1, rect.c2);
  const start = table ? table.last + 1 : rect.r1;
  const width = widthOf(rows);
  const extraRows = insert === 'INSERT_ROWS' ? rows.length : Math.max(0, start + rows.length - 1 - sheet.rowCount);
  const extraCols = Math.max(0, rect.c1 + width - 1 - sheet.columnCount);
  ss.checkCellLimit(extraRows * (sheet.columnCount + extraCols) + extraCols * sheet.rowCount);
  // Convert before touching the grid, so that a refused value leaves the tab as it was.
  const grown = { ...target, rect: { ...rect, r2: start + rows.length - 1, c2: rect.c1 + width - 1 }, closed: { row: false, col: false } };
  const writes = rows.map((row, r) => row.map((value, c) => toCellWrite(value, option, `values[${r}][${c}]`)));
  if (insert === 'INSERT_ROWS') sheet.insertRows(start, rows.length);
  else if (extraRows > 0) sheet.props.gridProperties.rowCount += extraRows;
  sheet.props.gridProperties.columnCount += extraCols;
  const updates = ss.applyWrite({ target: grown, writes }, start);
  const tableRange = table ? formatA1(sheet.title, table.first, rect.c1, table.last, Math.min(rect.c2, sheet.columnCount)) : undefined;
  return { spreadsheetId: ss.id, ...(tableRange ? { tableRange } : {}), updates };
}
