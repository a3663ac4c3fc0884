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

export interface TabAppend {
  title: string;
  state: TabState;
  /** Columns the table spans: values.append looks for the table in A..width. */
  width: number;
  rows: RowValues[];
  /** Users and sessions: the key of each row, to index the rows values.append answers. */
  keys: string[] | undefined;
}

/** Every request one flush needs, decided before the first is sent. */
export interface Plan {
  newTabs: Array<{ title: string; state: TabState; header: string[] }>;
  widen: Array<{ grid: TabGrid; columns: number }>;
  /** Header additions and existing rows' changes: one values.batchUpdate. */
  values: ValueRange[];
  appends: TabAppend[];
  /** Cells the grid grows by (new tabs, new columns, new rows): checked against the capacity. */
  growth: number;
  /** The part of `growth` due to events tabs: what a new spreadsheet can take when this one is full. */
  eventGrowth: number;
  /** Each tab's header once the flush is written. */
  headers: Map<TabState, string[]>;
}

/** A new tab: header row plus the one blank row a frozen header needs. */
export const NEW_TAB_ROWS = 2;

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
 * existing user's or session's row update (only the supplied cells, `''` to clear), and the rows
 * to append (events not found already written; users and sessions without a row yet).
 */
export function planFlush(tabs: PlanTab[]): Plan {
  const plan: Plan = { newTabs: [], widen: [], values: [], appends: [], growth: 0, eventGrowth: 0, headers: new Map() };
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
      plan.newTabs.push({ title: target.title, state, header });
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
    const rows: RowValues[] = [];
    const keys: string[] = [];
    if (target.kind === 'event') {
      for (const r of target.records) if (!reading?.found.has(r.id)) rows.push(newRow(eventPatch(r, cols)));
    } else {
      for (const c of target.changes) {
        const patch = upsertPatch(target.kind, c, cols);
        const row = grid ? state.index?.get(c.key) : undefined;
        if (row !== undefined) {
          const update = rowUpdate(target.title, row, patch);
          if (update) plan.values.push(update);
        } else {
          rows.push(newRow(patch));
          keys.push(c.key);
        }
      }
    }
    if (rows.length > 0) {
      const width = Math.max(header.length, grid?.columnCount ?? 0);
      plan.appends.push({ title: target.title, state, width: header.length, rows, keys: target.kind === 'event' ? undefined : keys });
      plan.growth += rows.length * width;
    }
    if (target.kind === 'event') plan.eventGrowth += plan.growth - growthBefore;
  }
  return plan;
}
