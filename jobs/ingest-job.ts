import type { TrackedRecord } from '../src/core/records/types';

/** The queue every accepted record is written to before the client gets its 2xx. */
export const INGEST_QUEUE = 'ingest';
export const INGEST_JOB_NAME = 'records';

/**
 * One job per tracker per Redis write: the records of every request coalesced into that write.
 * Holds no secrets — the token never leaves the HTTP edge.
 */
export interface IngestJobData {
  trackerId: string;
  records: TrackedRecord[];
  /**
   * Set when records carry client keys: names the list (see src/ingest/dedup.ts) of the records
   * that were duplicates, which the router skips. No list means none was.
   */
  dedup?: string;
}

/** The indices of the records of one ingest job that were duplicates (comma-separated), for the router to skip. */
export function duplicatesKey(prefix: string, token: string): string {
  return `${prefix}:dupes:${token}`;
}
