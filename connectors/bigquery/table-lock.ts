/**
 * One writer at a time per table within this process: BigQuery runs concurrent mutating DML on a
 * table optimistically and aborts the loser ("Could not serialize access to table … due to
 * concurrent update"), and two schema patches racing could each drop the other's new columns.
 * Keyed by `project:dataset.table`, so two destinations writing one table take turns.
 */
const tails = new Map<string, Promise<unknown>>();

export async function withTableLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const previous = tails.get(key) ?? Promise.resolve();
  const run = previous.then(fn, fn);
  const tail = run.catch(() => undefined);
  tails.set(key, tail);
  try {
    return await run;
  } finally {
    if (tails.get(key) === tail) tails.delete(key);
  }
}
