/**
 * Runs work one at a time per key, within this process: each call waits for the previous call on
 * the same key to settle (whether it succeeded or not). Keys with no work waiting are forgotten.
 * A call given a signal stops waiting when it aborts (rejecting with its reason); if its `fn` has
 * not started it never runs (work abandoned while queued must not land later, out of order), and if
 * it has, the key stays taken until it settles.
 */
export function createKeyedMutex(): <T>(key: string, fn: () => Promise<T>, signal?: AbortSignal) => Promise<T> {
  const tails = new Map<string, Promise<unknown>>();
  return async <T>(key: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> => {
    signal?.throwIfAborted();
    const previous = tails.get(key) ?? Promise.resolve();
    const turn = () => {
      signal?.throwIfAborted();
      return fn();
    };
    const run = previous.then(turn, turn);
    const tail = run.then(settled, settled);
    tails.set(key, tail);
    // The key is forgotten when the work settles, not when its caller stops waiting: a caller whose
    // signal aborts while its `fn` runs (a database query cannot be taken back) must not let the
    // next call start beside that work.
    void tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key);
    });
    return signal ? untilAborted(run, signal) : run;
  };
}

const settled = (): void => undefined;

/** `p`, or a rejection with the signal's reason as soon as it aborts. */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  return Promise.race([p, aborted]).finally(() => signal.removeEventListener('abort', onAbort!));
}
