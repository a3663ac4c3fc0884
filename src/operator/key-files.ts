import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Destination, Tracker } from '../core/trackers/types';

/** A service-account key as Google Cloud downloads it: what `credentials` holds when one is pasted. */
function isServiceAccountKey(value: unknown): value is { type: 'service_account'; client_email: string } {
  return typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'service_account';
}

/**
 * Where earlier versions kept a pasted key: DATA_DIR/keys/<tracker>/<destination>.json, named by
 * the destination's `keyFile`. A pasted key now stays in the destination's `credentials`,
 * encrypted in Redis with the other secrets (src/core/secrets); a kept file is taken back in at
 * the next start and deleted ({@link takeInKeptKeyFiles}). A `keyFile` the operator points
 * anywhere else is the operator's own file, and stays as it is.
 */
export function keyFilePath(dataDir: string, trackerId: string, destinationId: string): string {
  return path.resolve(dataDir, 'keys', trackerId, `${destinationId}.json`);
}

/** The key of a file this relay kept for the destination, or undefined when it has none here (another host's DATA_DIR, or the operator's own file). */
function keptKey(dataDir: string, trackerId: string, destination: Destination): Record<string, unknown> | undefined {
  const file = destination.settings.keyFile;
  if (typeof file !== 'string' || path.resolve(file) !== keyFilePath(dataDir, trackerId, destination.id)) return undefined;
  try {
    const key = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    return isServiceAccountKey(key) ? (key as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Whether some destination of the tracker names a key file this relay kept, present in this DATA_DIR. */
export function hasKeptKeyFiles(dataDir: string, tracker: Tracker): boolean {
  return tracker.destinations.some((d) => keptKey(dataDir, tracker.id, d) !== undefined);
}

/**
 * The tracker with each kept key file's key put back in its destination's `credentials` (the store
 * encrypts it), and the destinations whose files were taken in, to delete once the tracker is written.
 */
export function takeInKeptKeyFiles(dataDir: string, tracker: Tracker): { tracker: Tracker; destinationIds: string[] } {
  const destinationIds: string[] = [];
  const destinations = tracker.destinations.map((d) => {
    const key = keptKey(dataDir, tracker.id, d);
    if (!key) return d;
    destinationIds.push(d.id);
    const { keyFile: _kept, ...settings } = d.settings;
    return { ...d, settings: { ...settings, credentials: key } };
  });
  return { tracker: destinationIds.length === 0 ? tracker : { ...tracker, destinations }, destinationIds };
}

/** Deletes a destination's kept key file, if an earlier version left one. */
export function forgetKeyFile(dataDir: string, trackerId: string, destinationId: string): void {
  rmSync(keyFilePath(dataDir, trackerId, destinationId), { force: true });
}
