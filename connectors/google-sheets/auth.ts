import { auth } from 'googleapis/build/src/apis/sheets';
import { keyFileEmail } from '../shared/key-file';
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
 *
 * With a custom endpoint, a service-account key signs its own JWT with the Sheets scope for each
 * request (`useJWTAccessWithScope`) instead of trading one for a token at oauth2.googleapis.com:
 * an emulator or a private endpoint does not stand in for Google's OAuth server, and may be all
 * the network the relay reaches. Against Google itself the usual token exchange is kept.
 *
 * The identity of a key is its service account's e-mail: the address a spreadsheet must be shared
 * with, which every message about permissions names.
 */
export function resolveAuth(settings: GoogleSheetsSettings): ResolvedAuth {
  const signingItself = (client: SheetsAuth): SheetsAuth => {
    // Copied onto the JWT client that a service-account key makes (GoogleAuth.setGapicJWTValues).
    if (settings.endpoint) client.useJWTAccessWithScope = true;
    return client;
  };
  if (settings.credentials) {
    return { client: signingItself(new auth.GoogleAuth({ credentials: settings.credentials, scopes: [SHEETS_SCOPE] })), identity: settings.credentials.client_email };
  }
  if (settings.keyFile) {
    return { client: signingItself(new auth.GoogleAuth({ keyFile: settings.keyFile, scopes: [SHEETS_SCOPE] })), identity: keyFileEmail(settings.keyFile) ?? `key file ${settings.keyFile}` };
  }
  if (settings.endpoint) return { client: undefined, identity: `anonymous at ${settings.endpoint}` };
  return { client: new auth.GoogleAuth({ scopes: [SHEETS_SCOPE] }), identity: 'application default credentials' };
}
