import { invalidArgument } from './errors';
import { newDeveloperMetadata, type CreateDeveloperMetadataRequest, type DeveloperMetadata } from './metadata';
import type { Sheet, SheetProperties } from './sheet';
import type { Spreadsheet } from './spreadsheet';

type Dimension = 'ROWS' | 'COLUMNS';
interface DimensionRange {
  sheetId: number;
  dimension: Dimension;
  startIndex: number;
  endIndex: number;
}

/** The `spreadsheets.batchUpdate` requests the fake understands. */
export interface StructureRequest {
  addSheet?: { properties?: Partial<SheetProperties> };
  deleteSheet?: { sheetId: number };
  appendDimension?: { sheetId: number; dimension: Dimension; length: number };
  insertDimension?: { range: DimensionRange };
  deleteDimension?: { range: DimensionRange };
  updateSheetProperties?: { properties: Partial<SheetProperties>; fields: string };
  createDeveloperMetadata?: CreateDeveloperMetadataRequest;
}

export type StructureReply = { addSheet: { properties: SheetProperties } } | { createDeveloperMetadata: { developerMetadata: DeveloperMetadata } } | Record<string, never>;

function sheetById(ss: Spreadsheet, sheetId: number, where: string): Sheet {
  const sheet = ss.sheets.find((s) => s.props.sheetId === sheetId);
  if (!sheet) throw invalidArgument(`Invalid ${where}: No grid with id: ${sheetId}`);
  return sheet;
}

function setField(target: Record<string, unknown>, source: Record<string, unknown>, path: string[]): void {
  const [head, ...rest] = path;
  if (!head) return;
  if (rest.length === 0) {
    if (source[head] !== undefined) target[head] = structuredClone(source[head]);
    return;
  }
  const sub = (source[head] ?? {}) as Record<string, unknown>;
  target[head] ??= {};
  setField(target[head] as Record<string, unknown>, sub, rest);
}

function apply(ss: Spreadsheet, req: StructureRequest, where: string): StructureReply {
  if (req.addSheet) {
    const props = req.addSheet.properties ?? {};
    const title = props.title ?? `Sheet${ss.sheets.length + 1}`;
    if (ss.sheetByTitle(title)) throw invalidArgument(`Invalid ${where}.addSheet: A sheet with the name "${title}" already exists. Please enter another name.`);
    const grid = { rowCount: 1000, columnCount: 26, ...props.gridProperties };
    ss.checkCellLimit(grid.rowCount * grid.columnCount);
    return { addSheet: { properties: structuredClone(ss.addSheet({ ...props, title, gridProperties: grid }).props) } };
  }
  if (req.deleteSheet) {
    const sheet = sheetById(ss, req.deleteSheet.sheetId, `${where}.deleteSheet`);
    if (ss.sheets.length === 1) throw invalidArgument(`Invalid ${where}.deleteSheet: You can't remove all the sheets in a document.`);
    ss.sheets = ss.sheets.filter((s) => s !== sheet);
    ss.sheets.forEach((s, i) => (s.props.index = i));
    return {};
  }
  if (req.appendDimension) {
    const { sheetId, dimension, length } = req.appendDimension;
    const sheet = sheetById(ss, sheetId, `${where}.appendDimension`);
    if (!(length > 0)) throw invalidArgument(`Invalid ${where}.appendDimension: length must be positive`);
    ss.checkCellLimit(dimension === 'ROWS' ? length * sheet.columnCount : length * sheet.rowCount);
    if (dimension === 'ROWS') sheet.props.gridProperties.rowCount += length;
    else sheet.props.gridProperties.columnCount += length;
    return {};
  }
  if (req.insertDimension || req.deleteDimension) {
    const range = (req.insertDimension ?? req.deleteDimension)!.range;
    const sheet = sheetById(ss, range.sheetId, where);
    const count = range.endIndex - range.startIndex;
    if (!(count > 0)) throw invalidArgument(`Invalid ${where}: empty dimension range`);
    if (req.insertDimension) {
      ss.checkCellLimit(range.dimension === 'ROWS' ? count * sheet.columnCount : count * sheet.rowCount);
      if (range.dimension === 'ROWS') sheet.insertRows(range.startIndex + 1, count);
      else sheet.insertColumns(range.startIndex + 1, count);
    } else if (range.dimension === 'ROWS') sheet.deleteRows(range.startIndex + 1, count);
    else sheet.deleteColumns(range.startIndex + 1, count);
    return {};
  }
  if (req.updateSheetProperties) {
    const { properties, fields } = req.updateSheetProperties;
    const sheet = sheetById(ss, properties.sheetId ?? -1, `${where}.updateSheetProperties`);
    const next = structuredClone(sheet.props) as unknown as Record<string, unknown>;
    const paths = fields === '*' ? ['title', 'index', 'gridProperties'] : fields.split(',').map((f) => f.trim());
    for (const path of paths) setField(next, properties as Record<string, unknown>, path.split('.'));
    const props = next as unknown as SheetProperties;
    const other = ss.sheetByTitle(props.title);
    if (other && other !== sheet) throw invalidArgument(`Invalid ${where}.updateSheetProperties: A sheet with the name "${props.title}" already exists. Please enter another name.`);
    ss.checkCellLimit(props.gridProperties.rowCount * props.gridProperties.columnCount - sheet.cellCount);
    sheet.props = props;
    return {};
  }
  if (req.createDeveloperMetadata) {
    const taken = new Set(ss.developerMetadata.map((m) => m.metadataId));
    const dm = newDeveloperMetadata(req.createDeveloperMetadata, taken, () => ss.nextMetadataId++, where);
    ss.developerMetadata.push(dm);
    return { createDeveloperMetadata: { developerMetadata: structuredClone(dm) } };
  }
  throw invalidArgument(`Invalid ${where}: the fake does not implement ${Object.keys(req).join(', ') || 'an empty request'}`);
}

/** Applies the requests in order, atomically: "if any request is not valid, … none of the changes are applied". */
export function batchUpdate(ss: Spreadsheet, requests: StructureRequest[]): StructureReply[] {
  const before = { sheets: ss.sheets.map((s) => s.clone()), nextSheetId: ss.nextSheetId, developerMetadata: [...ss.developerMetadata], nextMetadataId: ss.nextMetadataId };
  try {
    return requests.map((req, i) => apply(ss, req, `requests[${i}]`));
  } catch (err) {
    ss.sheets = before.sheets;
    ss.nextSheetId = before.nextSheetId;
    ss.developerMetadata = before.developerMetadata;
    ss.nextMetadataId = before.nextMetadataId;
    throw err;
  }
}
