import type { TrackedRecord } from '../records/types';

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
}
