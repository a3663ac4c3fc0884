import { auth } from 'googleapis/build/src/apis/sheets';
import type { GoogleSheetsSettings } from './config';

/** Read and write cells, create spreadsheets (https://developers.google.com/workspace/sheets/api/scopes). */
export const SHEETS_SCOPE = 'https://www.googleapis.com/auth/spreadsheets';

export type SheetsAuth = InstanceType<typeof auth.GoogleAuth>;

export interface ResolvedAuth {
  /** undefined: requests go without authorization (a custom endpoint without credentials). */
  client: SheetsAuth | undefined;
  /** Names the credential, for shared budgets and messages; never secret. */
  identity: string;
}

/**
 * Credentials in order: inline service-account key, key file, then — unless a custom endpoint is
 * set — Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud, metadata server).
 */
export function resolveAuth(settings: GoogleSheetsSettings): ResolvedAuth {
  if (settings.credentials) {
    return { client: new auth.GoogleAuth({ credentials: settings.credentials, scopes: [SHEETS_SCOPE] }), identity: settings.credentials.client_email };
  }
  if (settings.keyFile) return { client: new auth.GoogleAuth({ keyFile: settings.keyFile, scopes: [SHEETS_SCOPE] }), identity: `key file ${settings.keyFile}` };
  if (settings.endpoint) return { client: undefined, identity: `anonymous at ${settings.endpoint}` };
  return { client: new auth.GoogleAuth({ scopes: [SHEETS_SCOPE] }), identity: 'application default credentials' };
}
