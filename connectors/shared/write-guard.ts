import { RetryableError } from '../errors';

/**
 * Refuses a write (or a test) that must not start: its writer is closed (the destination is being
 * re-opened, or the process stops) or the delivery plumbing has given the write up already. Both
 * are retryable: the records stay queued and go to the destination's next writer. `writer` names
 * the writer in the message, e.g. `the BigQuery writer`.
 */
export function guardWrite(writer: string, closed: boolean, signal: AbortSignal): void {
  if (closed) throw new RetryableError(`${writer} is closed`, { reason: 'closed' });
  if (signal.aborted) throw new RetryableError('the write was stopped before it started', { reason: 'aborted' });
}

/** A call cut short because the write's signal aborted: whatever it sent may have landed, so it is retried. */
export function writeStopped(cause?: unknown): RetryableError {
  return new RetryableError('the write was stopped', { reason: 'aborted', ...(cause === undefined ? {} : { cause }) });
}
