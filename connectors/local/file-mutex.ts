/**
 * Serializes work on one warehouse file within this process. DuckDB's file lock is a POSIX lock,
 * held per process, so it does not keep two instances of one process apart: without this, a
 * second destination on the same file, or a query run in the worker's own process, would open a
 * second instance and both would write the file.
 */
const tails = new Map<string, Promise<unknown>>();

export async function withFileMutex<T>(file: string, fn: () => Promise<T>): Promise<T> {
  const previous = tails.get(file) ?? Promise.resolve();
  const run = previous.then(fn, fn);
  const tail = run.catch(() => undefined);
  tails.set(file, tail);
  try {
    return await run;
  } finally {
    if (tails.get(file) === tail) tails.delete(file);
  }
}
