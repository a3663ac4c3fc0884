import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import * as z from 'zod';
import { readTextIfExists } from '../../src/core/files';

const CreatedSchema = z.object({ spreadsheetId: z.string().min(1), title: z.string(), createdAt: z.string() });
export type CreatedSpreadsheet = z.infer<typeof CreatedSchema>;

/**
 * Where a destination with `createSpreadsheet: true` keeps the id of the spreadsheet it created,
 * so that a restart writes to the same one: `DATA_DIR/google-sheets/<tracker>/<destination>.json`.
 */
export function createdSpreadsheetFile(dataDir: string, trackerId: string, destinationId: string): string {
  return path.join(dataDir, 'google-sheets', trackerId, `${destinationId}.json`);
}

export async function readCreatedSpreadsheet(file: string): Promise<CreatedSpreadsheet | undefined> {
  const text = await readTextIfExists(file);
  if (text === undefined) return undefined;
  return CreatedSchema.parse(JSON.parse(text));
}

/** Written to a temporary file and renamed, so a crash never leaves half a file. */
export async function saveCreatedSpreadsheet(file: string, created: CreatedSpreadsheet): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(created, null, 2)}\n`);
  await rename(tmp, file);
}

export const spreadsheetUrl = (id: string) => `https://docs.google.com/spreadsheets/d/${id}/edit`;
