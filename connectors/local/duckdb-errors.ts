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
 * The error for a write that needed more memory than WAREHOUSE_MEMORY_MB gives the writer. What
 * grows is the `_id` index of each table, which DuckDB holds in memory while it inserts: with
 * random ids (an import's, or a client's own UUIDv4) every insert touches the whole index, about
 * 60 bytes an event (82 MiB at 1.4 million events, measured); time-ordered ids (UUIDv7, which
 * records without `_id` get) touch only its newest part. Retried, so that nothing is lost while
 * the operator raises the limit.
 */
export function outOfMemoryError(file: string, err: unknown): RetryableError {
  return new RetryableError(
    `the local warehouse ${file} needs more memory than WAREHOUSE_MEMORY_MB gives it: DuckDB keeps each table's _id index in memory while it writes, about 60 bytes an event when ids are random (imports, clients' own UUIDv4 ids). Raise WAREHOUSE_MEMORY_MB (e.g. 512 for about 6 million such events) and restart the workers; this batch is retried meanwhile (${message(err)})`,
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
