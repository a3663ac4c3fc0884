import { ConfigurationError, RetryableError, type ConnectorError } from '../errors';

/** Not `instanceof Error`: errors thrown by the native binding come from another realm under jest. */
export function errorMessage(err: unknown): string {
  const text = (err as { message?: unknown } | null)?.message;
  return typeof text === 'string' ? text : String(err);
}
const message = errorMessage;

/** DuckDB's answer when another process holds the file: its lock is per process and exclusive for a writer. */
export function isLockError(err: unknown): boolean {
  return /Could not set lock on file/i.test(message(err));
}

/**
 * Errors caused by the data of some record rather than by the database: DuckDB prefixes its
 * messages with the error class (`Conversion Error: …`). Binder and parser errors are included
 * because the only user-controlled text in our SQL is property names.
 */
export function isDataError(err: unknown): boolean {
  return /^(Conversion|Invalid Input|Constraint|Out of Range|Parser|Binder) Error/i.test(message(err));
}

/** The error for a warehouse file another process has open. */
export function lockedError(file: string, err: unknown): RetryableError {
  const holder = /Conflicting lock is held in (.*?)(?:\. See also|$)/.exec(message(err))?.[1];
  return new RetryableError(
    `the local warehouse ${file} is open in another process${holder ? ` (${holder})` : ''}; DuckDB allows one writer process per file, so this batch waits until it is closed`,
    { reason: 'locked', cause: err },
  );
}

/** A file-system error that only the operator can fix: permissions, a read-only disk, a path through a file. */
export function isAccessError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return ['EACCES', 'EPERM', 'EROFS', 'ENOTDIR', 'EEXIST'].includes(code);
  return /Permission denied|Read-only file system|Not a directory/i.test(message(err));
}

/** DuckDB's answer when a statement needs more than the instance's `memory_limit`. */
export function isOutOfMemoryError(err: unknown): boolean {
  return /^Out of Memory Error/i.test(message(err));
}

/**
 * The error for a write that still ran out of memory at the writer's ceiling
 * (WAREHOUSE_MEMORY_MAX_MB, to which it raises itself from WAREHOUSE_MEMORY_MB). Seen with random
 * ids (an import's, a client's own UUIDv4) in a large warehouse (bench/RESULTS.md, "A 1 GB
 * import"). Retried, so that nothing is lost while the operator raises the ceiling.
 */
export function outOfMemoryError(file: string, err: unknown): RetryableError {
  return new RetryableError(
    `the local warehouse ${file} needs more memory than WAREHOUSE_MEMORY_MAX_MB lets its writer take (a large warehouse written with random ids, such as clients' own UUIDv4 or imported events without _event_at, needs more than one with the relay's time-ordered ids). Raise WAREHOUSE_MEMORY_MAX_MB and restart the workers; this batch is retried meanwhile (${message(err)})`,
    { reason: 'out-of-memory', cause: err },
  );
}

/** Whole-batch failures: access problems pause the destination, everything else is retried. */
export function toConnectorError(file: string, err: unknown): ConnectorError {
  if (err instanceof RetryableError || err instanceof ConfigurationError) return err;
  if (isLockError(err)) return lockedError(file, err);
  if (isOutOfMemoryError(err)) return outOfMemoryError(file, err);
  if (isAccessError(err)) return new ConfigurationError(`the local warehouse ${file} cannot be written: ${message(err)}`, { cause: err });
  return new RetryableError(`the local warehouse ${file} failed: ${message(err)}`, { cause: err });
}
