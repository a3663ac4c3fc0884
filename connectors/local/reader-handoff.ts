import { randomUUID } from 'node:crypto';
import { readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { sleep } from '../../src/core/sleep';

/**
 * A reader (`tributary query`, `export`) cannot open the file while the writer holds it, and the
 * writer keeps it open while batches keep coming (see database.ts). So a reader announces itself
 * with a marker file next to the warehouse; the writer checks for markers before each batch,
 * closes the file and waits while one is present. A marker not refreshed for this long belongs to
 * a reader that died and is ignored.
 */
export const READER_STALE_MS = 30_000;
const REFRESH_MS = 5_000;

const prefixOf = (file: string) => `${path.basename(file)}.reader-`;

/** Announces a reader of `file`; the returned function withdraws it. */
export async function announceReader(file: string): Promise<() => Promise<void>> {
  const marker = path.join(path.dirname(file), `${prefixOf(file)}${process.pid}-${randomUUID()}`);
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

/** Whether a live reader is waiting for `file`. Markers of dead readers are removed on the way. */
export async function readerWaiting(file: string, now = Date.now()): Promise<boolean> {
  const dir = path.dirname(file);
  const prefix = prefixOf(file);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return false;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const marker = path.join(dir, name);
    const info = await stat(marker).catch(() => undefined);
    if (info && now - info.mtimeMs < READER_STALE_MS) return true;
    if (info) await rm(marker, { force: true }).catch(() => undefined);
  }
  return false;
}

/** Waits while a reader is announced, up to `maxWaitMs`; returns early when `signal` aborts. */
export async function waitForReaders(file: string, signal: AbortSignal | undefined, maxWaitMs = READER_STALE_MS, pollMs = 50): Promise<void> {
  const deadline = Date.now() + maxWaitMs;
  while (!signal?.aborted && Date.now() < deadline && (await readerWaiting(file))) {
    await sleep(pollMs);
  }
}
