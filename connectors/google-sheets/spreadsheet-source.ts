import { ConfigurationError } from '../errors';
import { RESERVED_COLUMNS_BY_KIND } from '../shared/reserved-columns';
import type { DestinationContext } from '../types';
import type { SheetsClient } from './client';
import type { GoogleSheetsSettings, ResolvedSettings } from './config';
import { createRefusal } from './google-errors';
import { NEW_TAB_ROWS } from './plan';
import { createdSpreadsheetFile, readCreatedSpreadsheet, saveCreatedSpreadsheet, spreadsheetUrl } from './spreadsheet-file';

/**
 * The spreadsheet to write to: `spreadsheetId`, or with `createSpreadsheet` the one this
 * destination created before (its id is in the data directory), or a new one. A new spreadsheet
 * is owned by the credential that made it: a service account must share it (or the owner must
 * use their own credentials) before people can open it, so its URL is logged.
 */
export async function resolveSpreadsheet(ctx: DestinationContext<GoogleSheetsSettings>, client: SheetsClient, settings: ResolvedSettings, identity: string, signal: AbortSignal): Promise<string> {
  if (ctx.settings.spreadsheetId) return ctx.settings.spreadsheetId;
  const file = createdSpreadsheetFile(ctx.dataDir, ctx.trackerId, ctx.destinationId);
  const known = await readCreatedSpreadsheet(file);
  if (known) return known.spreadsheetId;
  const title = ctx.settings.title ?? `Tributary ${ctx.trackerId}`;
  const tab = (name: string, columns: number) => ({ title: name, gridProperties: { rowCount: NEW_TAB_ROWS, columnCount: columns, frozenRowCount: 1 } });
  const tabs = [tab(settings.tabs.users, RESERVED_COLUMNS_BY_KIND.user.length), tab(settings.tabs.sessions, RESERVED_COLUMNS_BY_KIND.session.length)];
  const created = await client.create(title, tabs, signal).catch((err: unknown) => {
    const refused = createRefusal(err);
    if (!refused) throw err;
    throw new ConfigurationError(
      `Google refused to create the spreadsheet (${refused.said}): a service account owns no Drive storage, so it cannot create spreadsheets. Create one yourself, share it with ${identity} as Editor and set spreadsheetId to its id instead of createSpreadsheet.`,
      { status: refused.status },
    );
  });
  const spreadsheetId = created.spreadsheetId;
  if (!spreadsheetId) throw new Error('spreadsheets.create answered without a spreadsheetId');
  await saveCreatedSpreadsheet(file, { spreadsheetId, title, createdAt: new Date().toISOString() });
  // A warning, so that `tributary destinations test` (whose log level is warn) shows it: the owner
  // should share the spreadsheet and copy its id into the settings.
  ctx.logger.warn({ spreadsheetId, url: spreadsheetUrl(spreadsheetId), file }, `google-sheets: created spreadsheet ${spreadsheetId} (${spreadsheetUrl(spreadsheetId)}); set spreadsheetId to it so that the destination no longer depends on ${file}`);
  return spreadsheetId;
}
