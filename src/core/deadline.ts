export interface DeadlineOptions {
  /** Longest the call may take. */
  timeoutMs: number;
  /** Stops the call early (e.g. the process is stopping). */
  signal: AbortSignal;
  /** The error the call rejects with when `timeoutMs` passes. */
  timeoutError: () => Error;
  /** The error the call rejects with when `signal` aborts. Default: the signal's reason. */
  abortError?: () => Error;
}

/**
 * Runs `call` with a signal of its own and settles by the deadline whatever `call` does: the
 * signal aborts and the returned promise rejects when `timeoutMs` passes or `opts.signal` aborts,
 * even if `call` ignores its signal and never settles.
 *
 * Why not `AbortSignal.any([signal, AbortSignal.timeout(ms)])`: on Node 20 a combined signal that
 * only a fetch holds can be garbage-collected before it fires (nodejs/node#57736; undici keeps
 * its signal in a WeakRef), and the call then hangs for good. Here the timer holds the controller,
 * and Node's timer list holds the timer, so the deadline cannot be collected away.
 *
 * `call` may still be running when this rejects; its late result or error is dropped, so whatever
 * it writes must be harmless to repeat.
 */
export async function withDeadline<T>(opts: DeadlineOptions, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const abortError = opts.abortError ?? (() => opts.signal.reason as Error);
  if (opts.signal.aborted) throw abortError();
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const deadline = new Promise<never>((_, reject) => {
    const give = (error: Error) => {
      controller.abort(error);
      reject(error);
    };
    onAbort = () => give(abortError());
    opts.signal.addEventListener('abort', onAbort, { once: true });
    timer = setTimeout(() => give(opts.timeoutError()), opts.timeoutMs);
  });
  const running = call(controller.signal);
  running.catch(() => undefined);
  try {
    return await Promise.race([running, deadline]);
  } finally {
    clearTimeout(timer);
    opts.signal.removeEventListener('abort', onAbort!);
  }
}

/**
 * A controller that aborts when any of `signals` does, linked by plain listeners: unlike
 * `AbortSignal.any`, its signal lives as long as the returned controller is referenced.
 */
export function linkedController(...signals: AbortSignal[]): AbortController {
  const controller = new AbortController();
  for (const s of signals) {
    if (s.aborted) {
      controller.abort(s.reason);
      break;
    }
    s.addEventListener('abort', () => controller.abort(s.reason), { once: true });
  }
  return controller;
}
