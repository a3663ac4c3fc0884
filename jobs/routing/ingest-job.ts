import { bigIntsAsStrings, holdsBigInt, parseExactJson, stringifyExactJson } from '../../src/core/records/exact-json';
import type { TrackedRecord } from '../../src/core/records/types';

/** The queue every accepted record is written to before the client gets its 2xx. */
export const INGEST_QUEUE = 'ingest';
export const INGEST_JOB_NAME = 'records';

/**
 * One job per tracker per Redis write: the records of every request coalesced into that write.
 * Holds no secrets — the token never leaves the HTTP edge.
 */
export interface IngestJobData {
  trackerId: string;
  /** The tracker partition the records belong to (src/core/redis/keyspace.ts); 0 when absent. */
  partition?: number;
  /**
   * The records as JSON can carry them. A record holding an integer beyond 2^53 (a `bigint`) is
   * here with that integer as its decimal string, and its exact text is in `exact`.
   */
  records: TrackedRecord[];
  /**
   * Record index → the record as JSON text with each such integer written as a bare JSON number
   * with all its digits, which the router puts in the destination streams as it is. BullMQ keeps
   * job data as JSON.stringify makes it and reads it back with JSON.parse, which would round the
   * number: as text inside a string it passes untouched. A reader that ignores this field
   * finds the digits as strings in `records`, never a rounded number.
   */
  exact?: Record<string, string>;
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

/**
 * A job's data. `bigInts` says that some record may hold a bigint (normalizeRecord reports it):
 * only then are the records walked, so the common job costs nothing more.
 */
export function ingestJobData(trackerId: string, records: TrackedRecord[], bigInts: boolean, dedup?: string, partition = 0): IngestJobData {
  const data: IngestJobData = partition === 0 ? { trackerId, records } : { trackerId, partition, records };
  if (bigInts) {
    let exact: Record<string, string> | undefined;
    const plain = records.map((record, i) => {
      if (!holdsBigInt(record.properties)) return record;
      (exact ??= {})[String(i)] = stringifyExactJson(record);
      return { ...record, properties: bigIntsAsStrings(record.properties) as TrackedRecord['properties'] };
    });
    if (exact) {
      data.records = plain;
      data.exact = exact;
    }
  }
  if (dedup !== undefined) data.dedup = dedup;
  return data;
}

/** Each record of a job as the JSON text of a stream entry, but those at the indices in `skip`. */
export function recordTexts(data: IngestJobData, skip?: ReadonlySet<number>): string[] {
  const texts: string[] = [];
  data.records.forEach((record, i) => {
    if (!skip?.has(i)) texts.push(data.exact?.[String(i)] ?? JSON.stringify(record));
  });
  return texts;
}

/** The same records as recordTexts, as values: an integer beyond 2^53 as a bigint, read from the record's exact text. */
export function recordValues(data: IngestJobData, skip?: ReadonlySet<number>): TrackedRecord[] {
  const values: TrackedRecord[] = [];
  data.records.forEach((record, i) => {
    if (skip?.has(i)) return;
    const exact = data.exact?.[String(i)];
    values.push(exact === undefined ? record : (parseExactJson(exact) as TrackedRecord));
  });
  return values;
}
