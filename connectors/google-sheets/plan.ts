import type { MergedChange } from '../shared/coalesce-upserts';
import type { TrackedRecord } from '../../src/core/records/types';
import { rowRange } from './a1';
import type { ValueRange } from './client';
import { columnsOf, evolveHeader } from './header';
import type { TabGrid, TabState } from './layout';
import type { TabReading } from './reads';
import { eventPatch, newRow, rowUpdate, upsertPatch, wantedColumns, type RowValues } from './rows';

/** One tab's share of a batch. */
export type Target = { kind: 'event'; title: string; records: TrackedRecord[] } | { kind: 'user' | 'session'; title: string; changes: MergedChange[] };

/** A new row at the row the writer chose for it: an event's `_id`, or a user's or session's key. */
export interface RowWrite {
  key: string;
  row: number;
  values: RowValues;
}

/** One tab's new rows, each at its own row (see planFlush). */
export interface TabRows {
  title: string;
  state: TabState;
  writes: RowWrite[];
}

/** Every request one flush needs, decided before the first is sent. */
export interface Plan {
  newTabs: Array<{ title: string; state: TabState; header: string[]; rowCount: number }>;
  widen: Array<{ grid: TabGrid; columns: number }>;
  /** Rows added at the end of a grid (appendDimension) before new rows are written there. */
  lengthen: Array<{ grid: TabGrid; rows: number }>;
  /** Header additions and existing rows' changes: with `rows`, one values.batchUpdate. */
  values: ValueRange[];
  rows: TabRows[];
  /** Cells the grid grows by (new tabs, new columns, new rows): checked against the capacity. */
  growth: number;
  /** The part of `growth` due to events tabs: what a new spreadsheet can take when this one is full. */
  eventGrowth: number;
  /** Each tab's header once the flush is written. */
  headers: Map<TabState, string[]>;
}

/** A new tab: header row plus the one blank row a frozen header needs. */
export const NEW_TAB_ROWS = 2;

/**
 * Blank rows a grid is lengthened by beyond what a flush writes: ten flushes like this one, at
 * least 1 000 (what Google gives a new sheet) and at most 50 000, so that about one flush in ten
 * needs a spreadsheets.batchUpdate (a write request of the per-minute quota) besides its values.
 * These cells count toward the 10 M limit as any; near it, a grid grows by what it needs alone
 * (prepare.ts).
 */
export const rowsAhead = (written: number): number => Math.min(50_000, Math.max(1000, 10 * written));

export interface PlanTab {
  target: Target;
  state: TabState;
  /** undefined: the tab does not exist yet. */
  grid: TabGrid | undefined;
  reading: TabReading | undefined;
  /** For a tab without a header yet: the columns to start with, in order (the same tab's header in the spreadsheet events continued from). */
  seed?: readonly string[];
}

/**
 * Lays a batch out on its tabs: the header each tab needs (existing columns stay where they are,
 * new ones go to the right), the grid it needs (appendDimension before writing past it), each
 * existing user's or session's row update (only the supplied cells, `''` to clear), and the new
 * rows (events not found already written; users and sessions without a row yet).
 *
 * The writer chooses each new row's place: after the tab's last row with data and the rows it
 * gave records before. A record written before by a call whose answer never came keeps the row it
 * was given (TabState.assigned), so writing it again writes the same cells, and the first call,
 * should Google apply it later, writes them too: nothing is doubled whatever the timing, which an
 * append (rows go wherever the table ends when Google applies the call) could not promise.
 */
export function planFlush(tabs: PlanTab[], ahead = true): Plan {
  const plan: Plan = { newTabs: [], widen: [], lengthen: [], values: [], rows: [], growth: 0, eventGrowth: 0, headers: new Map() };
  for (const { target, state, grid, reading, seed } of tabs) {
    const growthBefore = plan.growth;
    const sources = target.kind === 'event' ? target.records : target.changes;
    const current = reading?.header ?? [];
    const wanted = wantedColumns(target.kind, sources);
    const change = evolveHeader(current, current.length === 0 && seed ? [...seed.filter((name) => name !== ''), ...wanted] : wanted);
    const header = change.header;
    plan.headers.set(state, header);
    const cols = columnsOf(header);
    if (!grid) {
      // Its rows are added below, with the new rows that need them.
      plan.newTabs.push({ title: target.title, state, header, rowCount: NEW_TAB_ROWS });
      plan.growth += NEW_TAB_ROWS * header.length;
    } else if (header.length > grid.columnCount) {
      const columns = header.length - grid.columnCount;
      plan.widen.push({ grid, columns });
      plan.growth += columns * grid.rowCount;
    }
    if (change.added) {
      const { from, names } = change.added;
      plan.values.push({ range: rowRange(target.title, 1, from, from + names.length - 1), majorDimension: 'ROWS', values: [names] });
    }
    const fresh: Array<{ key: string; values: RowValues }> = [];
    if (target.kind === 'event') {
      for (const r of target.records) if (!reading?.found.has(r.id)) fresh.push({ key: r.id, values: newRow(eventPatch(r, cols)) });
    } else {
      for (const c of target.changes) {
        const patch = upsertPatch(target.kind, c, cols);
        const row = grid ? state.index?.get(c.key) : undefined;
        if (row !== undefined) {
          const update = rowUpdate(target.title, row, patch);
          if (update) plan.values.push(update);
        } else fresh.push({ key: c.key, values: newRow(patch) });
      }
    }
    if (fresh.length > 0) {
      const writes = placeRows(state, grid ? (state.endRow ?? 1) : 1, fresh);
      plan.rows.push({ title: target.title, state, writes });
      const needed = Math.max(...writes.map((w) => w.row));
      const rowCount = grid?.rowCount ?? NEW_TAB_ROWS;
      if (needed > rowCount) {
        const added = needed - rowCount + (ahead ? rowsAhead(writes.length) : 0);
        const width = Math.max(header.length, grid?.columnCount ?? 0);
        if (grid) plan.lengthen.push({ grid, rows: added });
        else plan.newTabs[plan.newTabs.length - 1]!.rowCount += added;
        plan.growth += added * width;
      }
    }
    if (target.kind === 'event') plan.eventGrowth += plan.growth - growthBefore;
  }
  return plan;
}

/**
 * Each new row's place: the row an earlier attempt gave the same record, else the next after the
 * tab's data (`endRow`) and every row given before.
 */
function placeRows(state: TabState, endRow: number, fresh: ReadonlyArray<{ key: string; values: RowValues }>): RowWrite[] {
  let next = endRow;
  for (const row of state.assigned.values()) next = Math.max(next, row);
  return fresh.map(({ key, values }) => ({ key, values, row: state.assigned.get(key) ?? ++next }));
}
