import pino, { type Logger } from 'pino';
import { isOutOfMemoryError, OUT_OF_MEMORY_LOG } from './redis/out-of-memory';

export type { Logger };

/** JSON logs on stdout. Tokens and credentials are redacted wherever they appear in a logged object. */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'tributary' },
      redact: {
        paths: ['authorization', 'token', '_token', '*.authorization', '*.token', '*._token', 'headers.authorization', 'req.headers.authorization', 'credentials', '*.credentials', '*.private_key'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}

/**
 * A listener for the 'error' events of a Redis client, queue or worker: each distinct message is
 * logged once per `intervalMs` (a Redis outage emits one per reconnect attempt), as a JSON line.
 * BullMQ prints an 'error' nobody listens to with console.error, outside the JSON log.
 */
export function throttledErrorLog(logger: Logger, what: string, intervalMs = 30_000): (err: Error) => void {
  const last = new Map<string, number>();
  return (err) => {
    const now = Date.now();
    // Redis's OOM text differs by script and line: one message for all of them, logged once per interval.
    const message = isOutOfMemoryError(err) ? OUT_OF_MEMORY_LOG : (err?.message ?? String(err));
    if ((last.get(message) ?? -Infinity) > now - intervalMs) return;
    if (last.size > 100) last.clear();
    last.set(message, now);
    logger.warn({ err: message }, `${what} error (repeats of this message are logged at most every ${Math.round(intervalMs / 1000)} s)`);
  };
}
