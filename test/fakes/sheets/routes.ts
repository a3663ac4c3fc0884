import { randomBytes } from 'node:crypto';
import { appendValues, type InsertDataOption } from './append';
import type { ValueInputOption, ValueRenderOption } from './cells';
import { invalidArgument, notFound } from './errors';
import type { SheetsMethod } from './faults';
import type { SheetProperties } from './sheet';
import { Spreadsheet, type MajorDimension, type ValueRange } from './spreadsheet';
import { batchUpdate, type StructureRequest } from './structure';

/** A parsed request: which method, on which spreadsheet and range. */
export interface Route {
  method: SheetsMethod;
  spreadsheetId?: string;
  range?: string;
}

export interface Call {
  route: Route;
  query: URLSearchParams;
  body: unknown;
}

/** Maps a Sheets v4 REST path (as googleapis sends it: path parameters percent-encoded) to a method. */
export function matchRoute(httpMethod: string, rawPath: string): Route | undefined {
  const parts = rawPath.split('/');
  if (parts[1] !== 'v4' || parts[2] !== 'spreadsheets') return undefined;
  if (parts.length === 3) return httpMethod === 'POST' ? { method: 'spreadsheets.create' } : undefined;
  const [idPart, verb] = parts[3]!.split(':');
  const spreadsheetId = decodeURIComponent(idPart!);
  if (parts.length === 4) {
    if (httpMethod === 'GET' && verb === undefined) return { method: 'spreadsheets.get', spreadsheetId };
    if (httpMethod === 'POST' && verb === 'batchUpdate') return { method: 'spreadsheets.batchUpdate', spreadsheetId };
    return undefined;
  }
  if (parts.length === 5 && verb === undefined) {
    if (parts[4] === 'values:batchGet' && httpMethod === 'GET') return { method: 'values.batchGet', spreadsheetId };
    if (parts[4] === 'values:batchUpdate' && httpMethod === 'POST') return { method: 'values.batchUpdate', spreadsheetId };
    return undefined;
  }
  if (parts.length !== 6 || parts[4] !== 'values' || verb !== undefined) return undefined;
  const m = /^(.*?)(?::(append|clear))?$/.exec(parts[5]!)!;
  const range = decodeURIComponent(m[1]!);
  if (m[2] === 'append' && httpMethod === 'POST') return { method: 'values.append', spreadsheetId, range };
  if (m[2] === 'clear' && httpMethod === 'POST') return { method: 'values.clear', spreadsheetId, range };
  if (m[2] === undefined && httpMethod === 'GET') return { method: 'values.get', spreadsheetId, range };
  if (m[2] === undefined && httpMethod === 'PUT') return { method: 'values.update', spreadsheetId, range };
  return undefined;
}

export function spreadsheetJson(ss: Spreadsheet) {
  return {
    spreadsheetId: ss.id,
    properties: { title: ss.title, locale: 'en_US', autoRecalc: 'ON_CHANGE', timeZone: 'Etc/GMT' },
    sheets: ss.sheets.map((s) => ({ properties: structuredClone(s.props) })),
    ...(ss.developerMetadata.length > 0 ? { developerMetadata: structuredClone(ss.developerMetadata) } : {}),
    spreadsheetUrl: `https://docs.google.com/spreadsheets/d/${ss.id}/edit`,
  };
}

export const newSpreadsheetId = () => randomBytes(33).toString('base64url');

function inputOption(value: string | null | undefined): ValueInputOption {
  if (value === 'RAW' || value === 'USER_ENTERED') return value;
  if (!value) throw invalidArgument("'valueInputOption' is required but not specified");
  throw invalidArgument(`Invalid value at 'value_input_option' (type.googleapis.com/google.apps.sheets.v4.ValueInputOption), "${value}"`);
}

const renderOption = (q: URLSearchParams) => (q.get('valueRenderOption') ?? 'FORMATTED_VALUE') as ValueRenderOption;
const majorOption = (q: URLSearchParams) => (q.get('majorDimension') ?? 'ROWS') as MajorDimension;

/** Runs one call against the spreadsheets; returns the JSON to answer. */
export function handle(call: Call, spreadsheets: Map<string, Spreadsheet>, cellLimit: number): unknown {
  const { route, query } = call;
  const body = (call.body ?? {}) as Record<string, unknown>;
  if (route.method === 'spreadsheets.create') {
    const props = (body.properties ?? {}) as { title?: string };
    const ss = new Spreadsheet(newSpreadsheetId(), props.title ?? 'Untitled spreadsheet', cellLimit);
    const sheets = (body.sheets as Array<{ properties?: Partial<SheetProperties> }> | undefined) ?? [{}];
    sheets.forEach((s, i) => {
      const grid = { rowCount: 1000, columnCount: 26, ...s.properties?.gridProperties };
      ss.checkCellLimit(grid.rowCount * grid.columnCount);
      ss.addSheet({ ...s.properties, title: s.properties?.title ?? `Sheet${i + 1}`, gridProperties: grid });
    });
    spreadsheets.set(ss.id, ss);
    return spreadsheetJson(ss);
  }
  const ss = spreadsheets.get(route.spreadsheetId ?? '');
  if (!ss) throw notFound();
  switch (route.method) {
    case 'spreadsheets.get':
      return spreadsheetJson(ss);
    case 'spreadsheets.batchUpdate': {
      const replies = batchUpdate(ss, (body.requests as StructureRequest[] | undefined) ?? []);
      return { spreadsheetId: ss.id, replies };
    }
    case 'values.get':
      return ss.getValues(route.range!, renderOption(query), majorOption(query));
    case 'values.batchGet':
      return { spreadsheetId: ss.id, valueRanges: query.getAll('ranges').map((r) => ss.getValues(r, renderOption(query), majorOption(query))) };
    case 'values.update': {
      const vr = body as ValueRange;
      if (vr.range && ss.target(vr.range).rect.r1 !== ss.target(route.range!).rect.r1) {
        throw invalidArgument(`Requested writing within range [${route.range}], but the body's range is [${vr.range}]`);
      }
      return ss.applyWrite(ss.prepareWrite({ ...vr, range: route.range! }, inputOption(query.get('valueInputOption')), 'values'));
    }
    case 'values.batchUpdate': {
      const option = inputOption(body.valueInputOption as string | undefined);
      const data = (body.data as ValueRange[] | undefined) ?? [];
      // All-or-nothing, like every Sheets write: check every range before applying any.
      const prepared = data.map((vr, i) => ss.prepareWrite(vr, option, `data[${i}]`));
      const responses = prepared.map((p) => ss.applyWrite(p));
      const sum = (k: 'updatedRows' | 'updatedColumns' | 'updatedCells') => responses.reduce((n, r) => n + r[k], 0);
      return {
        spreadsheetId: ss.id,
        totalUpdatedRows: sum('updatedRows'),
        totalUpdatedColumns: sum('updatedColumns'),
        totalUpdatedCells: sum('updatedCells'),
        totalUpdatedSheets: new Set(prepared.map((p) => p.target.sheet)).size,
        responses,
      };
    }
    case 'values.append':
      return appendValues(ss, route.range!, body as ValueRange, inputOption(query.get('valueInputOption')), (query.get('insertDataOption') ?? 'OVERWRITE') as InsertDataOption);
    case 'values.clear':
      return { spreadsheetId: ss.id, clearedRange: ss.clear(route.range!) };
  }
}
