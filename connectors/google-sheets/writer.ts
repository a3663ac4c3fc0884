import type { TrackedRecord } from '../../src/core/records/types';
import { ConnectorError, RetryableError } from '../errors';
import { missingKeyError } from '../shared/batch-records';
import { guardWrite, writeStopped } from '../shared/write-guard';
import type { DestinationContext, DestinationDetails, DestinationWriter, RecordOutcome, TestReport, WriteOptions } from '../types';
import { rowsOf, tableRange } from './a1';
import { resolveAuth } from './auth';
import { budgetsFor, type Budgets } from './budget';
import { checkCapacity, type SheetsCapacity } from './capacity';
import { SheetsClient, type StructureRequest } from './client';
import { BATCH_LIMITS, resolveSettings, type GoogleSheetsSettings, type ResolvedSettings } from './config';
import { LAYOUT_CHANGED, toConnectorError } from './google-errors';
import { Layout, newTabState, type TabState } from './layout';
import { eventsTabFor, partition } from './partition';
import { NEW_TAB_ROWS, planFlush, type Plan, type PlanTab, type TabAppend, type Target } from './plan';
import { readTabs, type TabView } from './reads';
import { chunkRows } from './rows';
import { resolveSpreadsheet } from './spreadsheet-source';

export interface WriterDeps {
  /** Milliseconds since the epoch. */
  now: () => number;
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** Rows read at the end of an events tab after a (re)start: a batch, Google's 1 000 default blank rows, and margin. */
const TAIL_ROWS = 2 * BATCH_LIMITS.maxRecords + 1000;

const keysOf = (t: Target) => (t.kind === 'event' ? t.records.map((r) => r.id) : t.changes.map((c) => c.key));

/** One google-sheets destination's writer. See index.ts for the behaviour it implements. */
export class SheetsWriter implements DestinationWriter {
  private readonly settings: ResolvedSettings;
  private readonly client: SheetsClient;
  private readonly budgets: Budgets;
  private readonly identity: string;
  private readonly tabs = new Map<string, TabState>();
  private layout: Layout | undefined;
  private spreadsheetId: string | undefined;
  private closed = false;
  private warnedAt = 0;

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
    // Some events may be in the sheet from an attempt whose success this writer saw (moving the
    // delivery cursor failed after it): look at the tabs' ends again, as a writer that just opened does.
    if (options?.resend) for (const title of part.events.keys()) this.state(title, 'event').endRow = undefined;
    const targets: Target[] = [...part.events].map(([title, list]): Target => ({ kind: 'event', title, records: list }));
    if (part.users.length > 0) targets.push({ kind: 'user', title: this.settings.tabs.users, changes: part.users });
    if (part.sessions.length > 0) targets.push({ kind: 'session', title: this.settings.tabs.sessions, changes: part.sessions });
    await this.guarded(signal, () => this.flush(targets, signal));
    return records.map((r) => (part.rejected.has(r) ? { status: 'failed', error: missingKeyError(r.kind === 'user' ? 'user' : 'session') } : { status: 'ok' }));
  }

  /** Makes sure the spreadsheet, the three tabs and their headers exist, and that we may write. */
  async test(signal: AbortSignal): Promise<TestReport> {
    this.guard(signal);
    this.forgetLayout();
    const targets: Target[] = [
      { kind: 'user', title: this.settings.tabs.users, changes: [] },
      { kind: 'session', title: this.settings.tabs.sessions, changes: [] },
      { kind: 'event', title: eventsTabFor(new Date(this.deps.now()), this.settings), records: [] },
    ];
    await this.guarded(signal, async () => {
      const writes = await this.flush(targets, signal);
      if (writes > 0) return;
      // Reading proves little: a viewer may read. Renaming a tab to its own name is a write that changes nothing.
      const grid = this.layout!.get(this.settings.tabs.users)!;
      await this.client.structure(this.spreadsheetId!, [{ updateSheetProperties: { properties: { sheetId: grid.sheetId, title: grid.title }, fields: 'title' } }], signal);
    });
    this.ctx.logger.info({ spreadsheetId: this.spreadsheetId, cells: this.layout?.totalCells }, 'google-sheets destination ready');
    const notes = [`spreadsheet ${this.spreadsheetId}: ${this.layout?.totalCells ?? 0} of ${this.settings.maxCells} cells used`];
    if (!this.ctx.settings.spreadsheetId) notes.push(`created by Tributary: set spreadsheetId=${this.spreadsheetId} and share it with the people who should see it`);
    return { notes };
  }

  /** Capacity as last seen, for the destination's status. */
  details(): DestinationDetails {
    const c = this.capacity();
    return {
      spreadsheetId: c.spreadsheetId ?? null,
      cells: c.cells ?? null,
      maxCells: c.maxCells,
      usedPercent: c.usedRatio === undefined ? null : Math.round(c.usedRatio * 1000) / 10,
      eventsTab: c.eventsTab,
    };
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  /** Where the writer stands against the 10 M-cell limit, as last seen. */
  capacity(): SheetsCapacity {
    const cells = this.layout?.totalCells;
    return {
      spreadsheetId: this.spreadsheetId,
      cells,
      maxCells: this.settings.maxCells,
      usedRatio: cells === undefined ? undefined : cells / this.settings.maxCells,
      eventsTab: eventsTabFor(new Date(this.deps.now()), this.settings),
    };
  }

  private forgetLayout(): void {
    this.layout = undefined;
  }

  private guard(signal: AbortSignal): void {
    guardWrite('the google-sheets writer', this.closed, signal);
  }

  private async guarded<T>(signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      const now = this.deps.now();
      const error = signal.aborted && !(err instanceof ConnectorError) ? writeStopped(err) : toConnectorError(err, { spreadsheetId: this.spreadsheetId, identity: this.identity, now });
      // Whatever failed, the grid may have changed (a lost append still grew it): read it again next time.
      this.forgetLayout();
      if (error.details.reason === LAYOUT_CHANGED) this.tabs.clear();
      if (error instanceof RetryableError && error.details.status === 429 && error.retryAfterMs) {
        this.budgets.write.block(now + error.retryAfterMs);
        this.budgets.read.block(now + error.retryAfterMs);
      }
      throw error;
    }
  }

  private state(title: string, kind: TabState['kind']): TabState {
    let s = this.tabs.get(title.toLowerCase());
    if (!s) this.tabs.set(title.toLowerCase(), (s = newTabState(kind)));
    return s;
  }

  /** One batch: at most one read round (two after a person edited a tab), then the writes of the plan. Returns the write requests made. */
  private async flush(targets: Target[], signal: AbortSignal): Promise<number> {
    this.spreadsheetId ??= await resolveSpreadsheet(this.ctx, this.client, this.settings, this.identity, signal);
    const id = this.spreadsheetId;
    const layout = (this.layout ??= Layout.from(await this.client.get(id, signal)));
    const tabs: PlanTab[] = [];
    const views = new Map<PlanTab, TabView>();
    for (const target of targets) {
      const tab: PlanTab = { target, state: this.state(target.title, target.kind), grid: layout.get(target.title), reading: undefined };
      tabs.push(tab);
      if (tab.grid) views.set(tab, { grid: tab.grid, state: tab.state, keys: keysOf(target) });
    }
    const readings = await readTabs(this.client, id, [...views.values()], TAIL_ROWS, signal);
    for (const [tab, view] of views) tab.reading = readings.get(view);
    const plan = planFlush(tabs);
    this.warnedAt = checkCapacity({ spreadsheetId: id, cells: layout.totalCells, growth: plan.growth, settings: this.settings, logger: this.ctx.logger, warnedAt: this.warnedAt });
    let writes = 0;
    if (plan.newTabs.length > 0 || plan.widen.length > 0) writes += await this.structure(id, layout, plan, signal);
    if (plan.values.length > 0) {
      await this.client.batchUpdateValues(id, plan.values, signal);
      writes++;
    }
    for (const [state, header] of plan.headers) state.header = header;
    for (const a of plan.appends) a.state.checkFrom ??= a.state.endRow ?? 1;
    for (const a of plan.appends) writes += await this.append(id, layout, a, signal);
    for (const t of tabs) t.state.checkFrom = undefined;
    return writes;
  }

  /** New tabs (header row frozen) and wider grids, in one spreadsheets.batchUpdate before any value is written there. */
  private async structure(id: string, layout: Layout, plan: Plan, signal: AbortSignal): Promise<number> {
    const requests: StructureRequest[] = [
      ...plan.newTabs.map((t) => ({ addSheet: { properties: { title: t.title, gridProperties: { rowCount: NEW_TAB_ROWS, columnCount: t.header.length, frozenRowCount: 1 } } } })),
      ...plan.widen.map((w) => ({ appendDimension: { sheetId: w.grid.sheetId, dimension: 'COLUMNS', length: w.columns } })),
    ];
    const replies = await this.client.structure(id, requests, signal);
    plan.newTabs.forEach((t, i) => {
      const props = replies[i]?.addSheet?.properties;
      if (!props) throw new Error(`addSheet of "${t.title}" answered without the new tab's properties`);
      layout.add(props);
      Object.assign(t.state, newTabState(t.state.kind), { endRow: 1, index: new Map() });
    });
    for (const w of plan.widen) w.grid.columnCount += w.columns;
    return 1;
  }

  /** values.append, split only when the rows pass Google's recommended 2 MB per request. */
  private async append(id: string, layout: Layout, a: TabAppend, signal: AbortSignal): Promise<number> {
    let writes = 0;
    for (const { rows, offset } of chunkRows(a.rows)) {
      const { first, last } = rowsOf(await this.client.append(id, tableRange(a.title, a.width), rows, signal));
      writes++;
      a.state.endRow = Math.max(a.state.endRow ?? 1, last);
      const grid = layout.get(a.title);
      if (grid) grid.rowCount += rows.length;
      a.keys?.slice(offset, offset + rows.length).forEach((key, i) => a.state.index?.set(key, first + i));
    }
    return writes;
  }
}
