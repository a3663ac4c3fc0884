import { createKeyedMutex } from '../shared/keyed-mutex';

/**
 * Serializes work on one warehouse file within this process. DuckDB's file lock is a POSIX lock,
 * held per process, so it does not keep two instances of one process apart: without this, a
 * second destination on the same file, or a query run in the worker's own process, would open a
 * second instance and both would write the file.
 */
export const withFileMutex = createKeyedMutex();
