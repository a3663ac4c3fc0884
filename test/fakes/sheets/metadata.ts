import { invalidArgument } from './errors';

/**
 * Developer metadata at the spreadsheet level
 * (https://developers.google.com/workspace/sheets/api/reference/rest/v4/spreadsheets.developerMetadata):
 * key/value pairs that travel with the spreadsheet, invisible in the UI, returned by
 * spreadsheets.get as `developerMetadata`. Sheet, row and column locations are not faked.
 */
export interface DeveloperMetadata {
  metadataId: number;
  metadataKey: string;
  metadataValue?: string;
  location: { locationType: 'SPREADSHEET'; spreadsheet: true };
  visibility: 'DOCUMENT' | 'PROJECT';
}

export interface CreateDeveloperMetadataRequest {
  developerMetadata?: { metadataId?: number; metadataKey?: string; metadataValue?: string; location?: { spreadsheet?: boolean; sheetId?: number }; visibility?: string };
}

/** Checks and builds one `createDeveloperMetadata`; `taken` are the ids in use. */
export function newDeveloperMetadata(req: CreateDeveloperMetadataRequest, taken: ReadonlySet<number>, nextId: () => number, where: string): DeveloperMetadata {
  const dm = req.developerMetadata ?? {};
  if (!dm.metadataKey) throw invalidArgument(`Invalid ${where}.createDeveloperMetadata: Developer metadata must always have a key specified.`);
  if (dm.visibility !== 'DOCUMENT' && dm.visibility !== 'PROJECT') throw invalidArgument(`Invalid ${where}.createDeveloperMetadata: Developer metadata must always have a visibility specified.`);
  if (dm.location?.spreadsheet !== true) throw invalidArgument(`Invalid ${where}.createDeveloperMetadata: the fake keeps spreadsheet-level metadata only (location.spreadsheet: true).`);
  if (dm.metadataId !== undefined && (!(dm.metadataId > 0) || taken.has(dm.metadataId))) {
    throw invalidArgument(`Invalid ${where}.createDeveloperMetadata: metadataId ${dm.metadataId} is not positive or already in use.`);
  }
  return {
    metadataId: dm.metadataId ?? nextId(),
    metadataKey: dm.metadataKey,
    ...(dm.metadataValue !== undefined ? { metadataValue: dm.metadataValue } : {}),
    location: { locationType: 'SPREADSHEET', spreadsheet: true },
    visibility: dm.visibility,
  };
}
