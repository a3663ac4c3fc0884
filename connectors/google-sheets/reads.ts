import { KEY_COLUMN, RESERVED_COLUMNS_BY_KIND } from '../shared/reserved-columns';
import { columnRange, headerRange } from './a1';
import type { CellValue, SheetsClient } from './client';
import { columnsOf, readHeader } from './header';
import type { TabGrid, TabState } from './layout';

/** One existing tab a flush writes to. */
export interface TabView {
  grid: TabGrid;
  state: TabState;
  /** Event ids, or user / session keys, of this flush. */
  keys: readonly string[];
}

export interface TabReading {
  header: string[];
  /** Event ids of this flush already in the tab (a retry after a write whose answer was lost). */
  found: Set<string>;
}

interface Probe {
  view: TabView;
  range: string;
  /** Returns false when the cells show the cached index is stale. */
  apply: (values: CellValue[][]) => boolean;
}

/** Most separate ranges in one batchGet when checking index rows; close rows are read together. */
const MAX_SPANS = 40;

function spans(rows: number[]): Array<[number, number]> {
  const sorted = [...new Set(rows)].sort((a, b) => a - b);
  for (let gap = 1; ; gap *= 4) {
    const out: Array<[number, number]> = [];
    for (const r of sorted) {
      const last = out[out.length - 1];
      if (last && r - last[1] <= gap) last[1] = r;
      else out.push([r, r]);
    }
    if (out.length <= MAX_SPANS) return out;
  }
}

const text = (v: CellValue | undefined) => (v === undefined ? '' : String(v));

/**
 * What to read of a tab's key column (`_id` for events, `_uid` / `_sid` otherwise) given a header:
 * - events the writer has not looked at since it opened: the last `tailRows` rows, where a batch
 *   written before a crash would be;
 * - every flush: the rows after the last known one (after `checkFrom` when a flush failed), where
 *   the writer is about to put new rows;
 * - users and sessions: the whole key column to build the index, else the indexed rows of this
 *   flush's keys, to check that nobody moved them.
 * State changes only once the cells are read, so a failed read leaves the cache as it was.
 */
function probes(view: TabView, header: readonly string[], reading: TabReading, tailRows: number, rebuild: boolean): Probe[] {
  const { grid, state } = view;
  // Nothing of this flush to look for (destinations test): the header is enough.
  if (view.keys.length === 0) return [];
  const col = columnsOf(header).get(KEY_COLUMN[state.kind]);
  const out: Probe[] = [];
  const tail = (r1: number, onKey: (key: string, row: number) => void, done: () => void = () => undefined) => {
    const first = Math.max(2, r1);
    if (first > grid.rowCount || col === undefined) return done();
    out.push({
      view,
      range: columnRange(grid.title, col, first, grid.rowCount),
      apply: (values) => {
        values.forEach((row, i) => {
          const key = text(row[0]);
          if (key !== '') onKey(key, first + i);
        });
        done();
        state.endRow = Math.max(state.endRow ?? 1, first - 1 + values.length);
        return true;
      },
    });
  };
  if (state.kind === 'event') {
    const ids = new Set(view.keys);
    const onKey = (key: string) => void (ids.has(key) && reading.found.add(key));
    if (state.wantIds) {
      // A re-send: every id of the tab, read whole once, then the rows past the last known.
      if (rebuild || state.ids === undefined) {
        const all = new Set<string>();
        tail(2, (key) => {
          all.add(key);
          onKey(key);
        }, () => {
          state.ids = all;
          state.endRow ??= 1;
        });
        return out;
      }
      const known = state.ids;
      for (const key of view.keys) if (known.has(key)) reading.found.add(key);
      tail((state.endRow ?? 1) + 1, (key) => {
        known.add(key);
        onKey(key);
      });
      return out;
    }
    // A tab without our key column may hold anything: new rows go below all of it, unless this writer made it empty.
    if (state.endRow === undefined) tail(grid.rowCount - tailRows + 1, onKey, () => (state.endRow ??= col === undefined && !state.blank ? grid.rowCount : 1));
    // The rows past the last known one, every flush: the writer places new rows itself (plan.ts),
    // so it must see what a failed flush left there, and any row put there since, before it writes.
    else tail(Math.min(state.checkFrom ?? state.endRow, state.endRow) + 1, onKey);
    return out;
  }
  if (rebuild || state.index === undefined) {
    const index = new Map<string, number>();
    tail(2, (key, row) => void (index.has(key) || index.set(key, row)), () => {
      state.index = index;
      state.endRow = 1;
    });
    return out;
  }
  const index = state.index;
  const rows = view.keys.map((k) => index.get(k)).filter((r): r is number => r !== undefined);
  if (rows.some((r) => r > grid.rowCount) || (rows.length > 0 && col === undefined)) return probes(view, header, reading, tailRows, true);
  for (const [r1, r2] of spans(rows)) {
    out.push({
      view,
      range: columnRange(grid.title, col!, r1, r2),
      apply: (values) =>
        view.keys.every((k) => {
          const r = index.get(k);
          return r === undefined || r < r1 || r > r2 || text(values[r - r1]?.[0]) === k;
        }),
    });
  }
  // As for events: what a failed flush left past the last known row, and any row put there since.
  tail(Math.min(state.checkFrom ?? state.endRow ?? 1, state.endRow ?? 1) + 1, (key, row) => void (index.has(key) || index.set(key, row)));
  return out;
}

async function run(client: SheetsClient, spreadsheetId: string, list: Probe[], signal: AbortSignal): Promise<Set<TabView>> {
  const stale = new Set<TabView>();
  if (list.length === 0) return stale;
  const values = await client.batchGet(spreadsheetId, list.map((p) => p.range), signal);
  list.forEach((p, i) => p.apply(values[i] ?? []) || stale.add(p.view));
  return stale;
}

/**
 * Reads, in one values.batchGet, every tab's header and the key cells the flush depends on. The
 * key column is looked for where the cached header had it, or where the writer puts it; when the
 * fresh header shows it elsewhere, or an indexed key is no longer in its row (someone sorted,
 * inserted or deleted rows), a second batchGet reads again by the fresh header and rebuilds the
 * index. So a flush costs one read request, two after a person changed the tab.
 */
export async function readTabs(client: SheetsClient, spreadsheetId: string, views: TabView[], tailRows: number, signal: AbortSignal): Promise<Map<TabView, TabReading>> {
  const readings = new Map<TabView, TabReading>();
  const first: Probe[] = [];
  const guesses = new Map<TabView, { col: number | undefined; endRow: number | undefined }>();
  for (const view of views) {
    const reading: TabReading = { header: [], found: new Set() };
    readings.set(view, reading);
    const guessed = view.state.header ?? [...RESERVED_COLUMNS_BY_KIND[view.state.kind]];
    guesses.set(view, { col: columnsOf(guessed).get(KEY_COLUMN[view.state.kind]), endRow: view.state.endRow });
    first.push({ view, range: headerRange(view.grid.title), apply: (values) => ((reading.header = readHeader(values[0])), true) });
    first.push(...probes(view, guessed, reading, tailRows, false));
  }
  const stale = await run(client, spreadsheetId, first, signal);
  const second: Probe[] = [];
  for (const view of views) {
    const reading = readings.get(view)!;
    view.state.header = reading.header;
    const guess = guesses.get(view)!;
    if (columnsOf(reading.header).get(KEY_COLUMN[view.state.kind]) === guess.col && !stale.has(view)) continue;
    // What was read in the wrong column means nothing: start again from the fresh header.
    reading.found.clear();
    view.state.endRow = guess.endRow;
    second.push(...probes(view, reading.header, reading, tailRows, true));
  }
  await run(client, spreadsheetId, second, signal);
  return readings;
}
