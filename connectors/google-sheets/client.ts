import { sheets, type MethodOptions, type sheets_v4 } from 'googleapis/build/src/apis/sheets';
import { withDeadline } from '../../src/core/deadline';
import { RetryableError } from '../errors';
import { agentFetch } from '../shared/agent-fetch';
import type { SheetsAuth } from './auth';
import type { Budgets } from './budget';

export type Sheets = sheets_v4.Schema$Spreadsheet;
export type SheetProperties = sheets_v4.Schema$SheetProperties;
export type StructureRequest = sheets_v4.Schema$Request;
export type ValueRange = sheets_v4.Schema$ValueRange;
export type CellValue = string | number | boolean;

export interface ClientOptions {
  auth: SheetsAuth | undefined;
  endpoint: string | undefined;
  timeoutMs: number;
  budgets: Budgets;
  now: () => number;
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** Only what the writer needs of a spreadsheet: its title, each tab's id, title and grid, and the spreadsheets its events continue in. */
const SPREADSHEET_FIELDS = 'spreadsheetId,properties.title,sheets.properties(sheetId,title,index,gridProperties(rowCount,columnCount)),developerMetadata(metadataKey,metadataValue)';

/**
 * The Sheets v4 calls the connector makes, and nothing else. Every call first waits for the
 * credential's read or write budget, and none is retried here: googleapis retries GET and PUT by
 * default (and requests that got no answer), which would re-send a write whose response was lost
 * and hide 429s from the delivery loop, so `retry: false` keeps retrying in jobs/ alone.
 */
export class SheetsClient {
  private readonly api: sheets_v4.Sheets;

  constructor(private readonly opts: ClientOptions) {
    // The sheets module alone loads in a fraction of the time of the whole googleapis index.
    // Node's own fetch rather than gaxios' lazily imported node-fetch (an ES module that jest's
    // CommonJS runtime cannot load); gaxios documents native fetch as a supported implementation.
    // Native fetch ignores the proxy agent gaxios picks from HTTPS_PROXY / NO_PROXY: agentFetch
    // sends those requests through it (shared/agent-fetch.ts).
    // No `timeout` here: gaxios would combine it with our signal by `AbortSignal.any`, which Node 20
    // can garbage-collect while a request hangs (see src/core/deadline.ts); each call has its own deadline.
    this.api = sheets({ version: 'v4', auth: opts.auth, rootUrl: opts.endpoint, retry: false, fetchImplementation: agentFetch });
  }

  /** Waits for the credential's read or write budget, then makes one call under its deadline. */
  private async call<T>(kind: 'read' | 'write', what: string, signal: AbortSignal, request: (options: MethodOptions) => Promise<T>): Promise<T> {
    const budget = this.opts.budgets[kind];
    for (let wait = budget.delay(this.opts.now()); wait > 0; wait = budget.delay(this.opts.now())) await this.opts.sleep(wait, signal);
    signal.throwIfAborted();
    budget.take(this.opts.now());
    const timeoutMs = this.opts.timeoutMs;
    return withDeadline(
      { timeoutMs, signal, timeoutError: () => new RetryableError(`no answer from the Sheets API: ${what} did not answer within ${timeoutMs} ms`, { reason: 'no-response' }) },
      (deadline) => request({ signal: deadline, retry: false }),
    );
  }

  async get(spreadsheetId: string, signal: AbortSignal): Promise<Sheets> {
    const res = await this.call('read', 'spreadsheets.get', signal, (o) => this.api.spreadsheets.get({ spreadsheetId, includeGridData: false, fields: SPREADSHEET_FIELDS }, o));
    return res.data;
  }

  async create(title: string, tabs: SheetProperties[], signal: AbortSignal): Promise<Sheets> {
    const res = await this.call('write', 'spreadsheets.create', signal, (o) => this.api.spreadsheets.create({ requestBody: { properties: { title }, sheets: tabs.map((properties) => ({ properties })) } }, o));
    return res.data;
  }

  async structure(spreadsheetId: string, requests: StructureRequest[], signal: AbortSignal): Promise<sheets_v4.Schema$Response[]> {
    const res = await this.call('write', 'spreadsheets.batchUpdate', signal, (o) => this.api.spreadsheets.batchUpdate({ spreadsheetId, requestBody: { requests } }, o));
    return res.data.replies ?? [];
  }

  /** Cells as text (FORMATTED_VALUE): headers and keys are compared as people see them. */
  async batchGet(spreadsheetId: string, ranges: string[], signal: AbortSignal): Promise<CellValue[][][]> {
    const res = await this.call('read', 'values.batchGet', signal, (o) => this.api.spreadsheets.values.batchGet({ spreadsheetId, ranges, majorDimension: 'ROWS', valueRenderOption: 'FORMATTED_VALUE' }, o));
    return (res.data.valueRanges ?? []).map((vr) => (vr.values ?? []) as CellValue[][]);
  }

  /** RAW: strings stay strings, so `=IMPORTXML(…)` is text and never a formula. `null` leaves a cell alone, `""` clears it. */
  async batchUpdateValues(spreadsheetId: string, data: ValueRange[], signal: AbortSignal): Promise<void> {
    await this.call('write', 'values.batchUpdate', signal, (o) => this.api.spreadsheets.values.batchUpdate({ spreadsheetId, requestBody: { valueInputOption: 'RAW', data } }, o));
  }
}
