import { readFileSync } from 'node:fs';

/** The parts of a service-account key file the connectors read. */
export interface KeyFileKey {
  client_email: string;
  private_key: string;
  private_key_id?: string;
}

/** A service-account key file's key, or undefined when the file cannot be read as one (the client library then says why). */
export function readKeyFile(file: string): KeyFileKey | undefined {
  try {
    const key = JSON.parse(readFileSync(file, 'utf8')) as { client_email?: unknown; private_key?: unknown; private_key_id?: unknown };
    if (typeof key.client_email !== 'string' || typeof key.private_key !== 'string') return undefined;
    return { client_email: key.client_email, private_key: key.private_key, ...(typeof key.private_key_id === 'string' && { private_key_id: key.private_key_id }) };
  } catch {
    return undefined;
  }
}

/**
 * The service account's e-mail in a key file, or undefined when the file cannot be read as one. It
 * names the credentials in messages: the address a spreadsheet is shared with, the principal a
 * dataset grants roles to.
 */
export function keyFileEmail(file: string): string | undefined {
  return readKeyFile(file)?.client_email;
}
