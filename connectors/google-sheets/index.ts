import { sleep } from '../../src/core/sleep';
import { googleCloudSteps } from '../shared/google-setup';
import type { Connector } from '../types';
import { BATCH_LIMITS, GoogleSheetsSettingsSchema, type GoogleSheetsSettings } from './config';
import { SheetsWriter, type WriterDeps } from './writer';

export { GoogleSheetsSettingsSchema, type GoogleSheetsSettings } from './config';
export type { SheetsCapacity } from './capacity';
export { SheetsWriter } from './writer';
export { CELL_CHARACTER_LIMIT, TRUNCATION_MARKER } from './values';

/**
 * The `google-sheets` connector: a tracker's users, sessions and events in a Google Sheets
 * spreadsheet, through the Sheets API v4, within Google's quotas.
 *
 * ## Tabs and columns
 * Tabs `users` (one row per `_uid`), `sessions` (one row per `_sid`) and events — `events_YYYY_MM`
 * per UTC month of `_received_at` (`rollover: 'monthly'`, default) or one `events` tab — are
 * created when missing, with the header row frozen. Row 1 is the header: the kind's reserved
 * columns first (`_id`, `_uid`, `_sid`, `_event`, `_event_at`, `_received_at` as the kind has
 * them), then `_context` once a record carries request context, then one column per property, each
 * added at the right the first time it has a non-null value. Existing columns never move. The
 * header is read back before every write and each value goes under the header cell that names it,
 * so people may reorder, hide or add columns; a column of ours that is renamed or deleted is added
 * again at the right.
 *
 * ## Values
 * Written with `valueInputOption=RAW`: numbers and booleans keep their type, strings stay text
 * (`=IMPORTXML(…)` is never a formula, `00123` keeps its zeros, dates stay ISO text), objects and
 * arrays become compact JSON. A whole number beyond 2^53 is written as text with its digits: a
 * cell's number is a double and would round it. Text past Google's 50 000 characters per cell keeps its first 49 988
 * characters followed by `…[truncated]`.
 *
 * ## Events: exactly once
 * One row each, at a row the writer chooses: the next after the tab's last row with data (read
 * every flush) and after every row it gave before (plan.ts). A record whose write got no answer
 * (timeout, lost response, 5xx) keeps its row: written again, it goes to the same cells, so a
 * call Google applies after the writer gave up on it, even after the retry, writes what is there
 * already. The next attempt also reads the `_id` column below the last row it knew and skips the
 * events found there; after a restart it reads the last 11 000 rows, and a re-sent batch, the
 * same records in the same order, gets the same rows. Grids grow by appendDimension (rows only
 * added, never set), ten flushes' worth ahead while the capacity allows, so that nine flushes in
 * ten need no structure request. The events tabs are the writer's: a row typed below its data moves the next
 * rows down if it is there when a flush reads, but one typed between a flush's read and its write
 * is overwritten.
 * From the first batch the delivery plumbing re-sends (`resend`: history from a backfill or an
 * import, or a batch written again after a restart) it reads every `_id` of the tab once and keeps
 * them, with what it appends, checking each later batch against them and the rows past the last
 * known one: history from anywhere in the tab's past is not doubled.
 *
 * ## Users and sessions: merge
 * An in-memory index key → row, built from the key column the first time and checked before each
 * use (the key cells of the rows to update are read back in the same request as the headers); if a
 * person sorted, inserted or deleted rows, it is rebuilt. An update writes only the cells it
 * supplies; `null` clears a cell. New keys get rows as new events do, at rows the writer chooses.
 *
 * ## Quotas
 * Per flush: one values.batchGet (headers and key checks), at most one spreadsheets.batchUpdate
 * (new tabs, wider or longer grids — about one flush in ten), one values.batchUpdate
 * (header additions, row updates and new rows; more only past 2 MB). Requests wait for a sliding-window budget
 * of `writeRequestsPerMinute` / `readRequestsPerMinute` (default 60 each, Google's per-user quota),
 * shared by the destinations using the same credential in the process. A 429 becomes a
 * RetryableError whose `retryAfterMs` reaches into the next minute; googleapis' own retries are off.
 *
 * ## Capacity
 * Google counts every grid cell toward 10 M per spreadsheet and refuses writes past it. Before a
 * write would pass `maxCells` (default 9.5 M), with `whenFull: 'new-spreadsheet'` (default) the
 * batch's events move on to the next of `nextSpreadsheetIds` or, when none is left, to a
 * spreadsheet the writer creates (`<title> · events 2`; Google refuses that to service accounts,
 * which own no Drive storage: delivery then pauses saying so), with the full tabs' headers. It is
 * recorded as developer metadata on the destination's spreadsheet before anything is written there
 * (continuation.ts), so every worker and restart writes to the same one; a re-sent batch is looked
 * for in both (prepare.ts). Users and sessions stay in the destination's
 * spreadsheet: when they no longer fit, or with `whenFull: 'pause'`, delivery pauses with a
 * ConfigurationError telling to archive old tabs or set a new spreadsheet; records stay queued.
 * Warnings are logged at 80 % and 90 % of each spreadsheet. `SheetsWriter.capacity()` and
 * `details()` report the figures and where events go.
 *
 * ## Errors
 * 401, 403 (no access, API disabled), 404 (spreadsheet) → ConfigurationError; 429, 5xx, timeouts →
 * RetryableError; a 400 caused by a change made by a person (tab deleted, grid shrunk) →
 * RetryableError after re-reading the spreadsheet; any other 400 → PermanentError for the batch.
 */
export function createGoogleSheetsConnector(deps: Partial<WriterDeps> = {}): Connector<GoogleSheetsSettings> {
  return {
    type: 'google-sheets',
    description: 'A Google Sheets spreadsheet: users, sessions and monthly events tabs, within the Sheets API quotas.',
    settingsSchema: GoogleSheetsSettingsSchema,
    setup: {
      primary: [{ setting: 'spreadsheetId', label: 'Spreadsheet', hint: 'Paste the address of the spreadsheet from the browser, e.g. https://docs.google.com/spreadsheets/d/1BxiMV…/edit#gid=0.' }],
      keySetting: 'credentials',
      afterKey: 'Share the spreadsheet with {email} as Editor: open it, click Share, paste this address, choose Editor, untick Notify people, and click Share.',
      steps: [...googleCloudSteps('Google Sheets API', 'sheets.googleapis.com', undefined), { text: 'Share the spreadsheet with the service account’s e-mail as Editor (shown below once you give the key).' }],
    },
    batch: BATCH_LIMITS,
    // The writer finds where rows go from the sheet it last read: a second writer would write over its rows.
    singleWriter: true,
    async open(ctx) {
      // Tests and benchmarks pass a clock whose waits advance it, so quota minutes pass at once.
      return new SheetsWriter(ctx, { now: deps.now ?? (() => ctx.now().getTime()), sleep: deps.sleep ?? sleep });
    },
  };
}

export const googleSheetsConnector = createGoogleSheetsConnector();
