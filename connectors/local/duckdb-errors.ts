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
 * A primary key that DuckDB says is taken. Every write skips (`ON CONFLICT DO NOTHING`) or merges
 * (`DO UPDATE`) a key that is stored, or (a first delivery's plain insert of events) is written
 * again that way when it meets one (write-events.ts), and a batch holds each key once, so this
 * never means that a record is a duplicate: it means that DuckDB's in-memory index holds a key
 * its table does not, as after a COMMIT that ran out of memory (the rolled-back keys stay in the
 * index until the file is opened again). It is the database's state, not the record's fault.
 */
export function isDuplicateKeyError(err: unknown): boolean {
  return /^Constraint Error: Duplicate key/i.test(message(err));
}

/**
 * Errors caused by the data of some record rather than by the database: DuckDB prefixes its
 * messages with the error class (`Conversion Error: …`). Binder and parser errors are included
 * because the only user-controlled text in our SQL is property names. A duplicate key is not one
 * (see isDuplicateKeyError).
 */
export function isDataError(err: unknown): boolean {
  return /^(Conversion|Invalid Input|Constraint|Out of Range|Parser|Binder) Error/i.test(message(err)) && !isDuplicateKeyError(err);
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

/**
 * DuckDB's answers when a statement or a commit needs more than the instance's `memory_limit`. A
 * statement says `Out of Memory Error: …`; a COMMIT that runs out while it writes the
 * transaction's blocks says `TransactionContext Error: Failed to commit: could not allocate block
 * of size 256.0 KiB (127.8 MiB/128.0 MiB used)` or `… failed to pin block …`. Each of a wide
 * table's columns takes blocks of its own, so a batch of wide records (webhook payloads with a
 * hundred or more properties) runs out at commit long before its rows would fill the limit.
 */
export function isOutOfMemoryError(err: unknown): boolean {
  return /Out of Memory Error|(could not allocate|failed to pin) block of size/i.test(message(err));
}

/**
 * The error for a write that still ran out of memory at the writer's ceiling
 * (WAREHOUSE_MEMORY_MAX_MB, to which it raises itself from WAREHOUSE_MEMORY_MB). Seen with random
 * ids (an import's, a client's own UUIDv4) in a large warehouse (bench/RESULTS.md, "A 1 GB
 * import"). Retried, so that nothing is lost while the operator raises the ceiling.
 */
export function outOfMemoryError(file: string, err: unknown): RetryableError {
  return new RetryableError(
    `the local warehouse ${file} needs more memory than WAREHOUSE_MEMORY_MAX_MB lets its writer take (a large warehouse written with random ids, such as clients' own UUIDv4 or imported events without _event_at, needs more than one with the relay's time-ordered ids; so does a table of many columns). Raise WAREHOUSE_MEMORY_MAX_MB and restart the workers; this batch is retried meanwhile (${message(err)})`,
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
