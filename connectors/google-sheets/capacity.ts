import type { Logger } from '../../src/core/logger';
import { ConfigurationError } from '../errors';
import type { ResolvedSettings } from './config';

/** Where a destination stands against Google's 10 M cells per spreadsheet. */
export interface SheetsCapacity {
  spreadsheetId: string | undefined;
  /** Cells of every tab's grid, empty or not, as last seen; undefined before the first look. */
  cells: number | undefined;
  /** Delivery pauses before passing this (setting `maxCells`). */
  maxCells: number;
  usedRatio: number | undefined;
  /** The tab events go to now (`events_2026_11` with monthly rollover). */
  eventsTab: string;
}

export interface CapacityCheck {
  spreadsheetId: string;
  cells: number;
  /** Cells the next writes add to the grid. */
  growth: number;
  settings: Pick<ResolvedSettings, 'maxCells' | 'tabs' | 'rollover'>;
  logger: Logger;
  /** The highest warning level already logged (0, 0.8, 0.9). */
  warnedAt: number;
}

/**
 * Google refuses any write past 10 M cells ("This action would increase the number of cells in
 * the workbook above the limit of 10000000 cells"), and counts empty cells of the grid too. Before
 * that, delivery pauses with a ConfigurationError: the records stay queued and the destination's
 * status says what to do. Warnings are logged on crossing 80 % and 90 %. Returns the level now reached.
 */
export function checkCapacity(c: CapacityCheck): number {
  const projected = c.cells + c.growth;
  const max = c.settings.maxCells;
  if (c.growth > 0 && projected > max) {
    const archive = c.settings.rollover === 'monthly' ? `download and delete old ${c.settings.tabs.events}_YYYY_MM tabs` : `download and clear old rows of ${c.settings.tabs.events}`;
    throw new ConfigurationError(
      `spreadsheet ${c.spreadsheetId} is full: ${c.cells} of ${max} cells used and this batch needs ${c.growth} more (Google's limit is 10 000 000 per spreadsheet). To resume, ${archive}, or set a new spreadsheetId.`,
      { reason: 'capacity' },
    );
  }
  const level = projected >= 0.9 * max ? 0.9 : projected >= 0.8 * max ? 0.8 : 0;
  if (level > c.warnedAt) c.logger.warn({ spreadsheetId: c.spreadsheetId, cells: projected, maxCells: max }, `google-sheets spreadsheet is ${Math.round((projected / max) * 100)}% full`);
  return level;
}
