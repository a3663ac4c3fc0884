import { readFileSync } from 'node:fs';

/**
 * The service account's e-mail in a key file, or undefined when the file cannot be read as one. It
 * names the credentials in messages: the address a spreadsheet is shared with, the principal a
 * dataset grants roles to.
 */
export function keyFileEmail(file: string): string | undefined {
  try {
    const key = JSON.parse(readFileSync(file, 'utf8')) as { client_email?: unknown };
    return typeof key.client_email === 'string' ? key.client_email : undefined;
  } catch {
    return undefined;
  }
}
