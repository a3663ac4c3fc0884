import { holdsBigInt, parseExactJson, stringifyExactJson } from '../../src/core/records/exact-json';
import type { TrackedRecord } from '../../src/core/records/types';

/** The queue every accepted record is written to before the client gets its 2xx. */
export const INGEST_QUEUE = 'ingest';
export const INGEST_JOB_NAME = 'records';

/**
 * The version of the ingest job format this relay writes. It reads every version up to this one,
 * so that records queued by an earlier relay are delivered after an upgrade; a job of a later
 * version (a relay rolled back while newer jobs wait) is refused with an error naming both, and
 * stays queued until a relay that reads it takes it.
 */
export const INGEST_JOB_FORMAT = 2;

/**
 * One job per tracker partition per Redis write: the records of every request coalesced into that
 * write. Holds no secrets — the token never leaves the HTTP edge.
 *
 * Version 2: the job's data (BullMQ's JSON) says what the records share, and the records travel
 * beside it, under `queuedRecordsKey(job key)`, as their JSON texts one to a line, written by the
 * same script as the job (src/ingest/job-add.ts). The router puts those lines into the destination
 * streams as they are: no stage between the edge and delivery parses a record and writes it again
 * (BullMQ would have read a whole job's records with JSON.parse before handing it over, and the
 * router written each one again). The records key is deleted by the script that routes the job.
 */
export interface IngestJobData {
  v: 2;
  trackerId: string;
  /** The tracker partition the records belong to (src/core/redis/keyspace.ts); absent for 0. */
  partition?: number;
  /** How many records the job holds (its records key has as many lines; none when 0). */
  n: number;
  /**
   * The receive time the job's records share (most of them: a job coalesces requests of one or a
   * few milliseconds). A line without its own `receivedAt` has this one: the router writes it back
   * where it was, right after the record's `id` (withReceivedAt), so the stream holds the edge's text.
   */
  at?: string;
  /**
   * 1 when some record may hold an integer beyond 2^53: its line has the integer with all its
   * digits, which only parseExactJson reads without rounding (src/core/records/exact-json.ts).
   */
  x?: 1;
  /**
   * Set when records carry client keys: names the list (see src/ingest/dedup.ts) of the records
   * that were duplicates, which the router skips. No list means none was.
   */
  dedup?: string;
}

/**
 * Version 1, written before version 2 and still read: the records inside the job's data, as JSON
 * can carry them. A record holding an integer beyond 2^53 had that integer as its decimal string
 * in `records`, and its exact text in `exact` (record index → text).
 */
export interface IngestJobDataV1 {
  v?: undefined;
  trackerId: string;
  partition?: number;
  records: TrackedRecord[];
  exact?: Record<string, string>;
  dedup?: string;
}

/** A job's data as found in the queue, whichever relay wrote it. */
export type QueuedJobData = IngestJobData | IngestJobDataV1;

/** A job as the edge writes it: its data and its records' lines. */
export interface NewIngestJob {
  data: IngestJobData;
  /** The records' JSON texts joined by newlines (JSON.stringify never writes a raw newline); '' for none. */
  lines: string;
}

/** Where a version 2 job's records are: beside the job's hash (same hash tag, so same cluster slot). */
export function queuedRecordsKey(jobKey: string): string {
  return `${jobKey}:records`;
}

/** The indices of the records of one ingest job that were duplicates (comma-separated), for the router to skip. */
export function duplicatesKey(prefix: string, token: string): string {
  return `${prefix}:dupes:${token}`;
}

/**
 * The job that queues `records`. `bigInts` says that some record may hold a bigint
 * (normalizeRecord reports it): only then is each record checked, so the common job costs nothing
 * more.
 */
export function newIngestJob(trackerId: string, records: readonly TrackedRecord[], bigInts: boolean, dedup?: string, partition = 0): NewIngestJob {
  const data: IngestJobData = { v: INGEST_JOB_FORMAT, trackerId, n: records.length };
  if (partition !== 0) data.partition = partition;
  let exact = false;
  const texts = records.map((record) => {
    if (bigInts && holdsBigInt(record.properties)) {
      exact = true;
      return stringifyExactJson(record);
    }
    return JSON.stringify(record);
  });
  const at = records[0]?.receivedAt;
  const shared = at === undefined ? undefined : withoutSharedReceivedAt(texts, records, at);
  if (shared) data.at = at;
  if (exact) data.x = 1;
  if (dedup !== undefined) data.dedup = dedup;
  return { data, lines: (shared ?? texts).join('\n') };
}

/** What a record's receive time follows in its text, and how it starts. */
const RECEIVED_AT = ',"receivedAt":"';
const ID = '","id":"';

/**
 * The index of the closing quote of a record text's `id` (normalizeRecord's key order: kind, id,
 * receivedAt, …), or -1 for a text not in that order. The closing quote is the first `","` after
 * the id starts: within a JSON string a quote is always escaped, so that sequence cannot be inside it.
 */
function idEnd(text: string): number {
  if (!text.startsWith('{"kind":"')) return -1;
  const id = text.indexOf(ID);
  return id < 0 ? -1 : text.indexOf('","', id + ID.length);
}

/** Where a record's text has its receive time, right after its id, as the index of the comma before it; -1 when it is not there. */
function receivedAtIndex(text: string): number {
  const end = idEnd(text);
  return end >= 0 && text.startsWith(RECEIVED_AT, end + 1) ? end + 1 : -1;
}

/**
 * The texts with `"receivedAt":"<at>"` left out where a record's receive time is `at`; undefined
 * (nothing left out) unless every text has its receive time right after its id, so that the
 * router can tell a line without one (withReceivedAt) from a line in another order.
 */
function withoutSharedReceivedAt(texts: readonly string[], records: readonly TrackedRecord[], at: string): string[] | undefined {
  const out: string[] = [];
  const cut = RECEIVED_AT.length + at.length + 1;
  for (let i = 0; i < texts.length; i++) {
    const text = texts[i]!;
    const record = records[i]!;
    // Where it is when the id needs no escaping (`{"kind":"<kind>","id":"<id>"` then the comma): checked, else searched for.
    const guess = 9 + record.kind.length + ID.length + record.id.length + 1;
    const index = text.startsWith(RECEIVED_AT, guess) && text.charCodeAt(guess - 1) === 34 ? guess : receivedAtIndex(text);
    if (index < 0) return undefined;
    out.push(record.receivedAt === at ? text.slice(0, index) + text.slice(index + cut) : text);
  }
  return out;
}

/** A line of a job with a shared receive time, with `receivedAt` written back right after its id when it has none. */
function withReceivedAt(line: string, at: string): string {
  const end = idEnd(line);
  if (end < 0) throw new UnreadableJobError(`a line of an ingest job is not a record as the edge writes it: ${line.slice(0, 80)}`);
  return line.startsWith(RECEIVED_AT, end + 1) ? line : `${line.slice(0, end + 1)}${RECEIVED_AT}${at}"${line.slice(end + 1)}`;
}

/** A job's data of a version this relay cannot read. */
export class UnreadableJobError extends Error {
  override name = 'UnreadableJobError';
}

/** How many records a queued job holds, duplicates included. */
export function queuedRecordCount(data: QueuedJobData): number {
  return data.v === undefined ? data.records.length : data.n;
}

/**
 * The records of a queued job as the texts of stream entries, in order, duplicates included;
 * `lines`: the job's records key (null when absent). Throws UnreadableJobError for a format this
 * relay does not know, and when a version 2 job's records are missing (callers first make sure
 * the job was not routed already: routing deletes them).
 */
export function queuedTexts(jobId: string, data: QueuedJobData, lines: string | null): string[] {
  if (data.v === undefined) return data.records.map((record, i) => data.exact?.[String(i)] ?? JSON.stringify(record));
  // Data from Redis: a later relay may have written a version this type does not know.
  const version: unknown = data.v;
  if (version !== INGEST_JOB_FORMAT) {
    throw new UnreadableJobError(`ingest job ${jobId} is in format ${String(version)}, written by a later Tributary; this one reads formats 1 to ${INGEST_JOB_FORMAT}. It stays queued: run the later version to deliver it.`);
  }
  if (data.n === 0) return [];
  if (lines === null) throw new UnreadableJobError(`ingest job ${jobId}'s records are missing from Redis although the job was not routed`);
  const texts = lines.split('\n');
  if (texts.length !== data.n) throw new UnreadableJobError(`ingest job ${jobId} says it holds ${data.n} records and its records key holds ${texts.length}`);
  const at = data.at;
  return at === undefined ? texts : texts.map((line) => withReceivedAt(line, at));
}

/** Whether a queued job's texts may hold integers beyond 2^53 (read them with parseExactJson). */
export function queuedExact(data: QueuedJobData): boolean {
  return data.v === undefined ? data.exact !== undefined : data.x === 1;
}

/** `texts` without the records at the indices in `skip`. */
export function withoutSkipped(texts: readonly string[], skip?: ReadonlySet<number>): string[] {
  return skip && skip.size > 0 ? texts.filter((_, i) => !skip.has(i)) : (texts as string[]);
}

/** Records as values from their texts: an integer beyond 2^53 as a bigint when `exact`. */
export function recordValuesOf(texts: readonly string[], exact: boolean): TrackedRecord[] {
  return texts.map((text) => (exact ? parseExactJson(text) : JSON.parse(text)) as TrackedRecord);
}
