import type { Logger } from '../../src/core/logger';
import { ConfigurationError } from '../errors';
import type { Book } from './book';
import { fullError, warnFilling, wouldPass } from './capacity';
import type { SheetsClient } from './client';
import { BATCH_LIMITS, type ResolvedSettings } from './config';
import { continuationTitle, recordContinuation, type Continuation } from './continuation';
import { createRefusal } from './google-errors';
import { Layout, newTabState } from './layout';
import { NEW_TAB_ROWS, planFlush, type Plan, type PlanTab, type Target } from './plan';
import { readTabs, type TabReading, type TabView } from './reads';
import { spreadsheetUrl } from './spreadsheet-file';

/** Rows read at the end of an events tab after a (re)start: a batch, Google's 1 000 default blank rows, and margin. */
export const TAIL_ROWS = 2 * BATCH_LIMITS.maxRecords + 1000;

const keysOf = (t: Target) => (t.kind === 'event' ? t.records.map((r) => r.id) : t.changes.map((c) => c.key));

/** A batch's share for one spreadsheet, read and planned, not yet written. */
export interface Prepared {
  book: Book;
  tabs: PlanTab[];
  plan: Plan;
}

/** What preparing a flush needs of the writer. */
export interface Room {
  client: SheetsClient;
  settings: ResolvedSettings;
  logger: Logger;
  identity: string;
  now: () => number;
  /** The destination's own spreadsheet, layout read. */
  home: Book;
  /** Where events continued, oldest first. */
  chain: readonly Continuation[];
  /** A spreadsheet with its layout read. */
  open(id: string): Promise<Book>;
  /** A spreadsheet as the writer knows it, without reading anything. */
  book(id: string): Book;
  /** Names the spreadsheet of the next requests, for error messages. */
  setCurrent(id: string | undefined): void;
  /** Records a new continuation in the writer once it is recorded in the home spreadsheet. */
  addContinuation(c: Continuation): void;
}

/**
 * Reads what a flush depends on in one spreadsheet (readTabs: headers, the ends of events tabs,
 * users' and sessions' key cells) and plans its writes. In a spreadsheet events continued in, an
 * events tab this writer has not looked at yet is also looked for in the spreadsheet before it:
 * events an attempt wrote there before the switch (its answer lost, the process restarted) are
 * found and not written again, and its header gives the new tab its columns in the same order.
 */
export async function prepare(room: Room, book: Book, targets: Target[], signal: AbortSignal): Promise<Prepared> {
  const layout = book.layout!;
  const tabs: PlanTab[] = [];
  const views = new Map<PlanTab, TabView>();
  for (const target of targets) {
    const tab: PlanTab = { target, state: book.state(target.title, target.kind), grid: layout.get(target.title), reading: undefined };
    tabs.push(tab);
    if (tab.grid) views.set(tab, { grid: tab.grid, state: tab.state, keys: keysOf(target) });
  }
  const carried = await readPredecessor(room, book, tabs.filter((t) => t.target.kind === 'event' && t.state.endRow === undefined), signal);
  room.setCurrent(book.id);
  const readings = await readTabs(room.client, book.id, [...views.values()], TAIL_ROWS, signal);
  for (const [tab, view] of views) tab.reading = readings.get(view);
  for (const [tab, before] of carried) {
    tab.reading ??= { header: [], found: new Set() };
    for (const id of before.found) tab.reading.found.add(id);
    tab.seed = before.header;
  }
  return { book, tabs, plan: planFlush(tabs) };
}

/** The same tabs in the spreadsheet events went to before `book`, read in one values.batchGet. */
async function readPredecessor(room: Room, book: Book, tabs: PlanTab[], signal: AbortSignal): Promise<Map<PlanTab, TabReading>> {
  const at = room.chain.findIndex((c) => c.spreadsheetId === book.id);
  const found = new Map<PlanTab, TabReading>();
  if (at < 0 || tabs.length === 0) return found;
  const before = await room.open(at === 0 ? room.home.id : room.chain[at - 1]!.spreadsheetId);
  const views = new Map<PlanTab, TabView>();
  for (const tab of tabs) {
    const grid = before.layout!.get(tab.target.title);
    if (grid) views.set(tab, { grid, state: newTabState('event'), keys: keysOf(tab.target) });
  }
  room.setCurrent(before.id);
  const readings = await readTabs(room.client, before.id, [...views.values()], TAIL_ROWS, signal);
  for (const [tab, view] of views) found.set(tab, readings.get(view)!);
  return found;
}

/**
 * Checks a spreadsheet's room for a prepared flush against `maxCells`. When it lacks room for the
 * events of the batch (and `whenFull` is `new-spreadsheet`), they move on to the next spreadsheet
 * and the rest stays; users and sessions that do not fit pause delivery, as does a full spreadsheet
 * with `whenFull: pause`, or one events moved on to that has no room either. Warnings are logged
 * on crossing 80 % and 90 %.
 */
export async function makeRoom(room: Room, prepared: Prepared, signal: AbortSignal, mayMove = true): Promise<Prepared[]> {
  const max = room.settings.maxCells;
  const cells = prepared.book.layout!.totalCells;
  const p = { ...prepared, plan: fitting(prepared.tabs, prepared.plan, cells, max) };
  const { book, plan } = p;
  const full = { spreadsheetId: book.id, cells, growth: plan.growth, settings: room.settings };
  if (!wouldPass(cells, plan.growth, max)) {
    book.warnedAt = warnFilling(room.logger, book.id, cells + plan.growth, max, book.warnedAt);
    return [p];
  }
  if (!mayMove || plan.eventGrowth === 0 || room.settings.whenFull === 'pause') throw fullError(mayMove && plan.eventGrowth === 0 && book === room.home ? 'upserts' : 'full', full);
  // Events that no spreadsheet could take within maxCells: moving on would only leave empty spreadsheets behind.
  if (plan.eventGrowth > max) throw fullError('batch', { ...full, growth: plan.eventGrowth });
  const rest = p.tabs.filter((t) => t.target.kind !== 'event');
  const restPlan = fitting(rest, planFlush(rest), cells, max);
  if (wouldPass(cells, restPlan.growth, max)) throw fullError('upserts', { ...full, growth: restPlan.growth });
  const out: Prepared[] = [];
  if (rest.length > 0) {
    book.warnedAt = warnFilling(room.logger, book.id, cells + restPlan.growth, max, book.warnedAt);
    out.push({ book, tabs: rest, plan: restPlan });
  }
  const eventTabs = p.tabs.filter((t) => t.target.kind === 'event');
  const next = await moveOn(room, book, eventTabs.map((t) => ({ title: t.target.title, columns: plan.headers.get(t.state)!.length })), signal);
  // Read and planned like any spreadsheet: what an earlier attempt wrote in the full one is found there.
  out.push(...(await makeRoom(room, await prepare(room, next, eventTabs.map((t) => t.target), signal), signal, false)));
  return out;
}

/** The plan, or when its blank rows ahead (plan.ts `rowsAhead`) would take it past `max`, the same plan with none. */
function fitting(tabs: PlanTab[], plan: Plan, cells: number, max: number): Plan {
  return wouldPass(cells, plan.growth, max) ? planFlush(tabs, false) : plan;
}

/**
 * The spreadsheet events continue in once `full` is: the next of `nextSpreadsheetIds` (the
 * owner's, shared with the credential), else one created with the batch's events tabs. It is
 * recorded in the home spreadsheet before a single event is written there, so a restart or a
 * re-sent batch goes to the same place. A process that dies between creating and recording leaves
 * an empty spreadsheet behind (logged with its URL); the next attempt creates another.
 */
async function moveOn(room: Room, full: Book, tabs: Array<{ title: string; columns: number }>, signal: AbortSignal): Promise<Book> {
  const used = new Set([room.home.id, ...room.chain.map((c) => c.spreadsheetId)]);
  const listed = room.settings.nextSpreadsheetIds.find((id) => !used.has(id));
  let next: Book;
  if (listed) {
    next = await room.open(listed);
  } else {
    const title = continuationTitle(room.home.layout!.title, room.chain.length);
    const grids = tabs.map((t) => ({ title: t.title, gridProperties: { rowCount: NEW_TAB_ROWS, columnCount: t.columns, frozenRowCount: 1 } }));
    room.setCurrent(undefined);
    const created = await room.client.create(title, grids, signal).catch((err: unknown) => Promise.reject(cannotCreate(err, full.id, room.identity)));
    if (!created.spreadsheetId) throw new Error('spreadsheets.create answered without a spreadsheetId');
    next = room.book(created.spreadsheetId);
    next.layout = Layout.from(created);
    // Its tabs are empty: new rows go right under the header the flush writes.
    for (const t of tabs) next.state(t.title, 'event').blank = true;
    room.logger.warn({ spreadsheetId: full.id, eventsSpreadsheetId: next.id, url: spreadsheetUrl(next.id) }, `google-sheets: spreadsheet ${full.id} is full; created ${next.id} (${spreadsheetUrl(next.id)}) for events, recording it in ${room.home.id}`);
  }
  const entry: Continuation = { spreadsheetId: next.id, title: next.layout!.title, createdAt: new Date(room.now()).toISOString() };
  room.setCurrent(room.home.id);
  await room.client.structure(room.home.id, [recordContinuation(entry)], signal);
  room.addContinuation(entry);
  // A warning, so that `tributary destinations test` (log level warn) and the logs show it.
  const share = listed ? '' : `; it belongs to ${room.identity}: share it with the people who should see it`;
  room.logger.warn(
    { spreadsheetId: full.id, eventsSpreadsheetId: next.id, url: spreadsheetUrl(next.id) },
    `google-sheets: spreadsheet ${full.id} is full: events now go to spreadsheet ${next.id} (${spreadsheetUrl(next.id)})${share}. Users and sessions stay in ${room.home.id}.`,
  );
  return next;
}

/** A refused spreadsheets.create, with what to do: a service account owns no Drive storage. */
function cannotCreate(err: unknown, full: string, identity: string): unknown {
  const refused = createRefusal(err);
  if (!refused) return err;
  return new ConfigurationError(
    `spreadsheet ${full} is full and Google refused to create one for the events that follow (${refused.said}): a service account owns no Drive storage, so it cannot create spreadsheets. Create one yourself, share it with ${identity} as Editor and add its id to nextSpreadsheetIds (or set whenFull: pause); the records stay queued.`,
    { status: refused.status, reason: 'capacity' },
  );
}
