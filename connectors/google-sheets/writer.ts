import type { TrackedRecord } from '../../src/core/records/types';
import { ConnectorError, RetryableError } from '../errors';
import { missingKeyError } from '../shared/batch-records';
import { guardWrite, writeStopped } from '../shared/write-guard';
import type { DestinationContext, DestinationDetails, DestinationWriter, RecordOutcome, TestReport, WriteOptions } from '../types';
import { rowsRange } from './a1';
import { resolveAuth } from './auth';
import { Book } from './book';
import { budgetsFor, type Budgets } from './budget';
import type { SheetsCapacity } from './capacity';
import { SheetsClient, type StructureRequest, type ValueRange } from './client';
import { resolveSettings, type GoogleSheetsSettings, type ResolvedSettings } from './config';
import { continuationsOf, type Continuation } from './continuation';
import { LAYOUT_CHANGED, toConnectorError } from './google-errors';
import { Layout, newTabState } from './layout';
import { eventsTabFor, partition } from './partition';
import type { Plan, Target } from './plan';
import { makeRoom, prepare, type Prepared, type Room } from './prepare';
import { chunkBySize } from '../shared/chunk-by-size';
import { chunkRows, MAX_REQUEST_BYTES } from './rows';
import { spreadsheetUrl } from './spreadsheet-file';
import { resolveSpreadsheet } from './spreadsheet-source';

export interface WriterDeps {
  /** Milliseconds since the epoch. */
  now: () => number;
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
}

const percent = (cells: number | undefined, max: number) => (cells === undefined ? null : Math.round((cells / max) * 1000) / 10);

/** One google-sheets destination's writer. See index.ts for the behaviour it implements. */
export class SheetsWriter implements DestinationWriter {
  private readonly settings: ResolvedSettings;
  private readonly client: SheetsClient;
  private readonly budgets: Budgets;
  private readonly identity: string;
  /** The destination's own spreadsheet: users, sessions, and events until it was full. */
  private home: Book | undefined;
  /** Spreadsheets events continued in, oldest first, as the home spreadsheet records them (continuation.ts). */
  private chain: Continuation[] = [];
  private readonly books = new Map<string, Book>();
  /** The spreadsheet of the request in progress, for error messages. */
  private current: string | undefined;
  private closed = false;
  /** A re-send came: events tabs keep all their ids from then on (TabState.wantIds). */
  private wantIds = false;

  constructor(
    private readonly ctx: DestinationContext<GoogleSheetsSettings>,
    private readonly deps: WriterDeps,
  ) {
    this.settings = resolveSettings(ctx.settings);
    const auth = resolveAuth(ctx.settings);
    this.identity = auth.identity;
    this.budgets = budgetsFor(auth.identity, { read: this.settings.readRequestsPerMinute, write: this.settings.writeRequestsPerMinute });
    this.client = new SheetsClient({ auth: auth.client, endpoint: ctx.settings.endpoint, timeoutMs: this.settings.requestTimeoutMs, budgets: this.budgets, now: deps.now, sleep: deps.sleep });
  }

  async write(records: readonly TrackedRecord[], signal: AbortSignal, options?: WriteOptions): Promise<RecordOutcome[]> {
    this.guard(signal);
    if (records.length === 0) return [];
    const part = partition(records, this.settings);
    // A re-send may hold events from anywhere in the tab's past (a backfill, an import run again, or
    // an attempt whose success this writer saw before moving the cursor failed): from now on every
    // flush checks its ids against all of the tab's, read whole once (reads.ts). Tabs this writer
    // has not opened yet learn it as they are opened (wantIds on the writer).
    if (options?.resend) {
      this.wantIds = true;
      for (const book of this.books.values()) {
        book.wantIds = true;
        for (const s of book.tabs.values()) if (s.kind === 'event') s.wantIds = true;
      }
    }
    const targets: Target[] = [...part.events].map(([title, list]): Target => ({ kind: 'event', title, records: list }));
    if (part.users.length > 0) targets.push({ kind: 'user', title: this.settings.tabs.users, changes: part.users });
    if (part.sessions.length > 0) targets.push({ kind: 'session', title: this.settings.tabs.sessions, changes: part.sessions });
    await this.guarded(signal, () => this.flush(targets, signal));
    return records.map((r) => (part.rejected.has(r) ? { status: 'failed', error: missingKeyError(r.kind === 'user' ? 'user' : 'session') } : { status: 'ok' }));
  }

  /** Makes sure the spreadsheet, the three tabs and their headers exist, and that we may write. */
  async test(signal: AbortSignal): Promise<TestReport> {
    this.guard(signal);
    this.forgetLayouts();
    const targets: Target[] = [
      { kind: 'user', title: this.settings.tabs.users, changes: [] },
      { kind: 'session', title: this.settings.tabs.sessions, changes: [] },
    ];
    // With a tab template, events tabs are made as their first events arrive: no name is known before.
    if (this.settings.tabTemplate === undefined) targets.push({ kind: 'event', title: eventsTabFor(new Date(this.deps.now()), this.settings), records: [] });
    await this.guarded(signal, async () => {
      const writes = await this.flush(targets, signal);
      if (writes > 0) return;
      // Reading proves little: a viewer may read. Renaming a tab to its own name is a write that changes nothing.
      const grid = this.home!.layout!.get(this.settings.tabs.users)!;
      await this.client.structure(this.home!.id, [{ updateSheetProperties: { properties: { sheetId: grid.sheetId, title: grid.title }, fields: 'title' } }], signal);
    });
    const c = this.capacity();
    this.ctx.logger.info({ spreadsheetId: c.spreadsheetId, cells: c.cells, eventsSpreadsheetId: c.eventsSpreadsheetId }, 'google-sheets destination ready');
    const notes = [`spreadsheet ${c.spreadsheetId}: ${c.cells ?? 0} of ${c.maxCells} cells used`];
    if (!this.ctx.settings.spreadsheetId) notes.push(`created by Tributary: set spreadsheetId=${c.spreadsheetId} and share it with the people who should see it`);
    const last = this.chain.at(-1);
    if (last) {
      const owner = this.settings.nextSpreadsheetIds.includes(last.spreadsheetId) ? '' : ` It was created by ${this.identity}: share it with the people who should see it.`;
      notes.push(
        `spreadsheet ${c.spreadsheetId} was full on ${last.createdAt}: events continue in spreadsheet ${last.spreadsheetId} (${spreadsheetUrl(last.spreadsheetId)}), ${c.eventsCells ?? 0} of ${c.maxCells} cells used.${owner} Users and sessions stay in ${c.spreadsheetId}.`,
      );
    }
    return { notes };
  }

  /** Capacity as last seen, for the destination's status. */
  details(): DestinationDetails {
    const c = this.capacity();
    return {
      spreadsheetId: c.spreadsheetId ?? null,
      cells: c.cells ?? null,
      maxCells: c.maxCells,
      usedPercent: percent(c.cells, c.maxCells),
      eventsTab: c.eventsTab,
      eventsSpreadsheetId: c.eventsSpreadsheetId ?? null,
      eventsSpreadsheetUrl: c.eventsSpreadsheetId ? spreadsheetUrl(c.eventsSpreadsheetId) : null,
      eventsCells: c.eventsCells ?? null,
      eventsUsedPercent: percent(c.eventsCells, c.maxCells),
    };
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  /** Where the writer stands against the 10 M-cell limit, as last seen. */
  capacity(): SheetsCapacity {
    const cells = this.home?.layout?.totalCells;
    const last = this.chain.at(-1);
    return {
      spreadsheetId: this.home?.id,
      cells,
      maxCells: this.settings.maxCells,
      usedRatio: cells === undefined ? undefined : cells / this.settings.maxCells,
      eventsTab: eventsTabFor(new Date(this.deps.now()), this.settings),
      eventsSpreadsheetId: last?.spreadsheetId,
      eventsCells: last ? this.books.get(last.spreadsheetId)?.layout?.totalCells : undefined,
    };
  }

  private forgetLayouts(): void {
    for (const book of this.books.values()) book.layout = undefined;
  }

  private guard(signal: AbortSignal): void {
    guardWrite('the google-sheets writer', this.closed, signal);
  }

  private async guarded<T>(signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      const now = this.deps.now();
      const error = signal.aborted && !(err instanceof ConnectorError) ? writeStopped(err) : toConnectorError(err, { spreadsheetId: this.current ?? this.home?.id, continuationOf: this.continuationOf(this.current), identity: this.identity, now });
      // Whatever failed, the grids may have changed (a lost append still grew one): read them again next time.
      this.forgetLayouts();
      if (error.details.reason === LAYOUT_CHANGED) for (const book of this.books.values()) book.tabs.clear();
      if (error instanceof RetryableError && error.details.status === 429 && error.retryAfterMs) {
        this.budgets.write.block(now + error.retryAfterMs);
        this.budgets.read.block(now + error.retryAfterMs);
      }
      throw error;
    }
  }

  /** The home spreadsheet, when `id` is one its events continue in. */
  private continuationOf(id: string | undefined): string | undefined {
    return id !== undefined && this.chain.some((c) => c.spreadsheetId === id) ? this.home?.id : undefined;
  }

  private bookFor(id: string): Book {
    let book = this.books.get(id);
    if (!book) {
      book = new Book(id);
      book.wantIds = this.wantIds;
      this.books.set(id, book);
    }
    return book;
  }

  /** A spreadsheet with its layout read (one spreadsheets.get, then cached until a failure). */
  private async open(id: string, signal: AbortSignal): Promise<Book> {
    const book = this.bookFor(id);
    if (!book.layout) {
      this.current = id;
      const spreadsheet = await this.client.get(id, signal);
      book.layout = Layout.from(spreadsheet);
      if (book === this.home) this.chain = continuationsOf(spreadsheet);
    }
    return book;
  }

  /**
   * One batch: the reads (one values.batchGet per spreadsheet written to; one more after a person
   * edited a tab, or after a restart once events continue in another spreadsheet), the room check
   * (which may move events on to a new spreadsheet), then the writes of each plan. Returns the
   * write requests made.
   */
  private async flush(targets: Target[], signal: AbortSignal): Promise<number> {
    this.home ??= this.bookFor(await resolveSpreadsheet(this.ctx, this.client, this.settings, this.identity, signal));
    const home = await this.open(this.home.id, signal);
    const last = this.chain.at(-1);
    const events = last ? await this.open(last.spreadsheetId, signal) : home;
    const groups = new Map<Book, Target[]>();
    for (const t of targets) {
      const book = t.kind === 'event' ? events : home;
      groups.set(book, [...(groups.get(book) ?? []), t]);
    }
    const room: Room = {
      client: this.client,
      settings: this.settings,
      logger: this.ctx.logger,
      identity: this.identity,
      now: this.deps.now,
      home,
      chain: this.chain,
      open: (id) => this.open(id, signal),
      book: (id) => this.bookFor(id),
      setCurrent: (id) => void (this.current = id),
      addContinuation: (c) => void this.chain.push(c),
    };
    const prepared: Prepared[] = [];
    for (const [book, list] of groups) prepared.push(...(await makeRoom(room, await prepare(room, book, list, signal), signal)));
    let writes = 0;
    for (const p of prepared) writes += await this.commit(p, signal);
    return writes;
  }

  /**
   * A plan's writes: new tabs, wider and longer grids (one spreadsheets.batchUpdate), then header
   * additions, row updates and new rows, each new row at the row the plan gave it (one
   * values.batchUpdate, more only past 2 MB). The rows given are recorded before the values are
   * sent, so that a write whose answer never comes is written to the same cells when it comes again.
   */
  private async commit({ book, tabs, plan }: Prepared, signal: AbortSignal): Promise<number> {
    const id = book.id;
    const layout = book.layout!;
    this.current = id;
    let writes = 0;
    if (plan.newTabs.length > 0 || plan.widen.length > 0 || plan.lengthen.length > 0) writes += await this.structure(id, layout, plan, signal);
    for (const t of plan.rows) {
      t.state.checkFrom ??= t.state.endRow ?? 1;
      for (const w of t.writes) t.state.assigned.set(w.key, w.row);
    }
    for (const data of valueRequests(plan)) {
      await this.client.batchUpdateValues(id, data, signal);
      writes++;
    }
    for (const [state, header] of plan.headers) state.header = header;
    for (const t of plan.rows) {
      for (const w of t.writes) {
        t.state.assigned.delete(w.key);
        t.state.endRow = Math.max(t.state.endRow ?? 1, w.row);
        if (t.state.kind !== 'event') t.state.index?.set(w.key, w.row);
      }
    }
    for (const t of tabs) {
      t.state.checkFrom = undefined;
      // Found in the tab by this flush's read (an event), or indexed there (a user or session, whose
      // row this flush updated): written by an earlier attempt, at the row it was given.
      for (const key of t.reading?.found ?? []) t.state.assigned.delete(key);
      if (t.target.kind !== 'event') for (const c of t.target.changes) if (t.state.index?.has(c.key)) t.state.assigned.delete(c.key);
      // Every event of the flush is in the tab now: written, or found there.
      if (t.state.ids && t.target.kind === 'event') for (const r of t.target.records) t.state.ids.add(r.id);
    }
    return writes;
  }

  /** New tabs (header row frozen), wider and longer grids, in one spreadsheets.batchUpdate before any value is written there. */
  private async structure(id: string, layout: Layout, plan: Plan, signal: AbortSignal): Promise<number> {
    const requests: StructureRequest[] = [
      ...plan.newTabs.map((t) => ({ addSheet: { properties: { title: t.title, gridProperties: { rowCount: t.rowCount, columnCount: t.header.length, frozenRowCount: 1 } } } })),
      ...plan.widen.map((w) => ({ appendDimension: { sheetId: w.grid.sheetId, dimension: 'COLUMNS', length: w.columns } })),
      // Adding rows is the one grid change that a call Google applies late cannot turn into a loss.
      ...plan.lengthen.map((l) => ({ appendDimension: { sheetId: l.grid.sheetId, dimension: 'ROWS', length: l.rows } })),
    ];
    const replies = await this.client.structure(id, requests, signal);
    plan.newTabs.forEach((t, i) => {
      const props = replies[i]?.addSheet?.properties;
      if (!props) throw new Error(`addSheet of "${t.title}" answered without the new tab's properties`);
      layout.add(props);
      // A new tab is empty: its ids, when they are kept, are none.
      Object.assign(t.state, newTabState(t.state.kind), { endRow: 1, index: new Map(), wantIds: t.state.wantIds, ids: t.state.wantIds ? new Set<string>() : undefined });
    });
    for (const w of plan.widen) w.grid.columnCount += w.columns;
    for (const l of plan.lengthen) l.grid.rowCount += l.rows;
    return 1;
  }
}

/**
 * The plan's values as values.batchUpdate requests: the header and row updates first, then each
 * tab's new rows in runs of consecutive rows; a new request only past Google's recommended 2 MB.
 */
function valueRequests(plan: Plan): ValueRange[][] {
  const ranges: ValueRange[] = [...plan.values];
  for (const t of plan.rows) {
    const sorted = [...t.writes].sort((a, b) => a.row - b.row);
    for (let i = 0; i < sorted.length; ) {
      let j = i + 1;
      while (j < sorted.length && sorted[j]!.row === sorted[j - 1]!.row + 1) j++;
      const run = sorted.slice(i, j);
      // A long run is cut where its rows pass 2 MB, so that no one range outgrows a request.
      for (const { rows, offset } of chunkRows(run.map((w) => w.values))) {
        const width = Math.max(1, ...rows.map((r) => r.length));
        ranges.push({ range: rowsRange(t.title, run[offset]!.row, run[offset]!.row + rows.length - 1, width), majorDimension: 'ROWS', values: rows });
      }
      i = j;
    }
  }
  return chunkBySize(ranges, MAX_REQUEST_BYTES, (range) => Buffer.byteLength(JSON.stringify(range)));
}
