import type { Logger } from '../../src/core/logger';
import { ConfigurationError } from '../errors';
import type { ResolvedSettings } from './config';

/** Where a destination stands against Google's 10 M cells per spreadsheet. */
export interface SheetsCapacity {
  /** The destination's own spreadsheet (users, sessions, and events until it was full). */
  spreadsheetId: string | undefined;
  /** Cells of every tab's grid, empty or not, as last seen; undefined before the first look. */
  cells: number | undefined;
  /** Delivery pauses, or events move on, before passing this (setting `maxCells`). */
  maxCells: number;
  usedRatio: number | undefined;
  /** The tab events go to now (`events_2026_11` with monthly rollover). */
  eventsTab: string;
  /** The spreadsheet events continue in since the destination's own was full; undefined until then. */
  eventsSpreadsheetId: string | undefined;
  /** Its cells as last seen. */
  eventsCells: number | undefined;
}

/** Google's limit, for messages: https://support.google.com/drive/answer/37603 */
export const GOOGLE_CELL_LIMIT = 10_000_000;

/** Whether writes adding `growth` cells take a spreadsheet of `cells` past `max`. */
export const wouldPass = (cells: number, growth: number, max: number): boolean => growth > 0 && cells + growth > max;

type FullCase =
  /** `whenFull: pause`, or nothing of the batch could move to another spreadsheet. */
  | 'full'
  /** The users and sessions of the batch do not fit in the destination's own spreadsheet, where they always stay. */
  | 'upserts'
  /** One batch's events need more than a whole new spreadsheet may hold. */
  | 'batch';

export interface FullContext {
  spreadsheetId: string;
  cells: number;
  growth: number;
  settings: Pick<ResolvedSettings, 'maxCells' | 'tabs' | 'rollover'>;
}

/**
 * The error that pauses delivery at the cell limit: Google refuses any write past 10 M cells
 * ("This action would increase the number of cells in the workbook above the limit of 10000000
 * cells") and counts empty cells of the grid too. The records stay queued; the message says what
 * to do. Thrown before Google would refuse, at `maxCells`.
 */
export function fullError(kind: FullCase, c: FullContext): ConfigurationError {
  const max = c.settings.maxCells;
  const used = `${c.cells} of ${max} cells used and this batch needs ${c.growth} more (Google's limit is ${GOOGLE_CELL_LIMIT} per spreadsheet)`;
  const archive = c.settings.rollover === 'monthly' ? `download and delete old ${c.settings.tabs.events}_YYYY_MM tabs` : `download and clear old rows of ${c.settings.tabs.events}`;
  if (kind === 'upserts') {
    return new ConfigurationError(
      `spreadsheet ${c.spreadsheetId} is full for users and sessions: ${used}. Users and sessions always stay in this spreadsheet; to resume, ${archive} there (or delete rows of people no longer needed), or set a new spreadsheetId.`,
      { reason: 'capacity' },
    );
  }
  if (kind === 'batch') {
    return new ConfigurationError(`a batch of events needs ${c.growth} cells, more than a new spreadsheet may hold under maxCells (${max}): raise maxCells`, { reason: 'capacity' });
  }
  return new ConfigurationError(`spreadsheet ${c.spreadsheetId} is full: ${used}. To resume, ${archive}, or set a new spreadsheetId.`, { reason: 'capacity' });
}

/** Logs a warning on crossing 80 % and 90 % of `max`; returns the level now reached (0, 0.8, 0.9). */
export function warnFilling(logger: Logger, spreadsheetId: string, projected: number, max: number, warnedAt: number): number {
  const level = projected >= 0.9 * max ? 0.9 : projected >= 0.8 * max ? 0.8 : 0;
  if (level > warnedAt) logger.warn({ spreadsheetId, cells: projected, maxCells: max }, `google-sheets spreadsheet ${spreadsheetId} is ${Math.round((projected / max) * 100)}% full`);
  return level;
}
