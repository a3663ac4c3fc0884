import { randomUUID } from 'node:crypto';
import { readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { sleep } from '../../src/core/sleep';

/**
 * DuckDB lets one process open a file for writing, and the writer keeps it open while batches keep
 * coming (database.ts). Who else wants the file says so with a marker file next to it, which the
 * writer looks for before each batch and, while idle, every 200 ms:
 *
 * - a **reader** (`tributary query`, `export`): the writer closes the file and waits while one is
 *   present;
 * - a **writer** of another relay process (several workers delivering partitions of one tracker
 *   into one file) that found the file locked: the writer closes it once it has had it for its turn
 *   (WRITER_TURN_MS) and waits until the other has opened it;
 * - the **holder**: a relay process whose writer has the file open says so, so that a writer that
 *   finds the file locked knows whether waiting for its turn can help (a relay) or not (the DuckDB
 *   CLI, another program).
 *
 * A marker not refreshed for MARKER_STALE_MS belongs to a process that died and is ignored.
 */
export const MARKER_STALE_MS = 30_000;
const REFRESH_MS = 5_000;

export type FileRole = 'reader' | 'writer' | 'holder';

const prefixOf = (file: string, role: FileRole) => `${path.basename(file)}.${role}-`;

/** Announces this process in `role` for `file`; the returned function withdraws it. */
export async function announce(file: string, role: FileRole): Promise<() => Promise<void>> {
  const marker = path.join(path.dirname(file), `${prefixOf(file, role)}${process.pid}-${randomUUID()}`);
  await writeFile(marker, `${process.pid}\n`);
  const refresh = setInterval(() => {
    const now = new Date();
    utimes(marker, now, now).catch(() => undefined);
  }, REFRESH_MS);
  refresh.unref();
  return async () => {
    clearInterval(refresh);
    await rm(marker, { force: true });
  };
}

export const announceReader = (file: string) => announce(file, 'reader');

/**
 * The roles live processes have announced for `file`. This process's own count too: in `npm
 * start` the console's queries run on the API's thread and the writer on the delivery thread, each
 * with its own modules (so its own file mutex), and the reader's marker is how the writer knows.
 * Markers of dead processes are removed on the way.
 */
export async function announced(file: string, now = Date.now()): Promise<Set<FileRole>> {
  const found = new Set<FileRole>();
  const dir = path.dirname(file);
  const base = `${path.basename(file)}.`;
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return found;
  }
  for (const name of names) {
    if (!name.startsWith(base)) continue;
    const role = name.slice(base.length).split('-', 1)[0];
    if (role !== 'reader' && role !== 'writer' && role !== 'holder') continue;
    const marker = path.join(dir, name);
    const info = await stat(marker).catch(() => undefined);
    if (info && now - info.mtimeMs < MARKER_STALE_MS) found.add(role);
    else if (info) await rm(marker, { force: true }).catch(() => undefined);
  }
  return found;
}

/** Waits while a process has announced one of `roles`, up to `maxWaitMs`; returns early when `signal` aborts. */
export async function waitWhileAnnounced(file: string, roles: readonly FileRole[], signal: AbortSignal | undefined, maxWaitMs: number, pollMs = 50): Promise<void> {
  const deadline = Date.now() + maxWaitMs;
  while (!signal?.aborted && Date.now() < deadline) {
    const present = await announced(file);
    if (!roles.some((role) => present.has(role))) return;
    await sleep(pollMs);
  }
}
