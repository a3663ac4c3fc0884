import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** A service-account key as Google Cloud downloads it: what `credentials` holds when one is pasted. */
function isServiceAccountKey(value: unknown): value is { type: 'service_account'; client_email: string } {
  return typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'service_account';
}

/** Where a destination's key is kept: DATA_DIR/keys/<tracker>/<destination>.json. */
export function keyFilePath(dataDir: string, trackerId: string, destinationId: string): string {
  return path.resolve(dataDir, 'keys', trackerId, `${destinationId}.json`);
}

/**
 * Settings with a pasted service-account key (`credentials`) moved to a file of its own, readable
 * by this user only (0600, in a 0700 folder), and named by `keyFile` instead: the key is not kept
 * in Redis, where every reader of the tracker's configuration would have it, nor in backups of
 * Redis. Written whole or not at all (a temporary file renamed). Settings without one come back as
 * they are.
 */
export function keepKeyAsFile(dataDir: string, trackerId: string, destinationId: string, settings: Record<string, unknown>): Record<string, unknown> {
  const { credentials, ...rest } = settings;
  if (!isServiceAccountKey(credentials)) return settings;
  const file = keyFilePath(dataDir, trackerId, destinationId);
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  renameSync(temporary, file);
  return { ...rest, keyFile: file };
}

/** Deletes a destination's kept key, if it has one. */
export function forgetKeyFile(dataDir: string, trackerId: string, destinationId: string): void {
  rmSync(keyFilePath(dataDir, trackerId, destinationId), { force: true });
}
