import { holdsBigInt, parseExactJson, stringifyExactJson } from '../../src/core/records/exact-json';
import type { TrackedRecord } from '../../src/core/records/types';
import { lineTexts, type LineBlock } from './stream-entries';

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
   * where it was, right after the record's `id` (queuedLines), so the stream holds the edge's text.
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
 * router can tell a line without one (queuedLines) from a line in another order.
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

const NEWLINE = 0x0a;
const KIND_START = Buffer.from('{"kind":"');
const ID_BYTES = Buffer.from(ID);
const ID_CLOSE = Buffer.from('","');
const RECEIVED_AT_BYTES = Buffer.from(RECEIVED_AT);

/** idEnd on the line at `bytes[start, end)`: the index in `bytes` of the closing quote of its id, or -1. */
function idEndIn(bytes: Buffer, start: number, end: number): number {
  if (end - start < KIND_START.length || bytes.compare(KIND_START, 0, KIND_START.length, start, start + KIND_START.length) !== 0) return -1;
  const id = bytes.indexOf(ID_BYTES, start);
  if (id < 0 || id >= end) return -1;
  const close = bytes.indexOf(ID_CLOSE, id + ID_BYTES.length);
  return close < 0 || close >= end ? -1 : close;
}

/** Whether `bytes` holds `part` at `at`, within `end`. */
function holdsAt(bytes: Buffer, part: Buffer, at: number, end: number): boolean {
  return at + part.length <= end && bytes.compare(part, 0, part.length, at, at + part.length) === 0;
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
 * `lines`: the job's records key (null when absent). Throws as queuedLines does.
 */
export function queuedTexts(jobId: string, data: QueuedJobData, lines: string | null): string[] {
  return lineTexts(queuedLines(jobId, data, lines === null ? null : Buffer.from(lines)));
}

/**
 * The records of a queued job as a stream block holds them (jobs/routing/stream-entries.ts): their
 * JSON lines in order, those at the indices in `skip` (duplicates) left out, as UTF-8. `lines`: the
 * job's records key as stored (null when absent). A version 2 job's bytes are taken as they are,
 * each line's receive time written back after its id when the job has a shared one: nothing is
 * decoded and encoded again (for a job of 100 typical events, 1.7 µs a record as texts, 0.4 as
 * bytes). Throws UnreadableJobError for a format this relay does not know, and when a version 2
 * job's records are missing (callers first make sure the job was not routed already: routing
 * deletes them) or do not match its data.
 */
export function queuedLines(jobId: string, data: QueuedJobData, lines: Buffer | null, skip?: ReadonlySet<number>): LineBlock {
  if (data.v === undefined) {
    const texts = withoutSkipped(
      data.records.map((record, i) => data.exact?.[String(i)] ?? JSON.stringify(record)),
      skip,
    );
    return { bytes: Buffer.from(texts.join('\n')), count: texts.length };
  }
  // Data from Redis: a later relay may have written a version this type does not know.
  const version: unknown = data.v;
  if (version !== INGEST_JOB_FORMAT) {
    throw new UnreadableJobError(`ingest job ${jobId} is in format ${String(version)}, written by a later Tributary; this one reads formats 1 to ${INGEST_JOB_FORMAT}. It stays queued: run the later version to deliver it.`);
  }
  if (data.n === 0) return { bytes: Buffer.alloc(0), count: 0 };
  if (lines === null) throw new UnreadableJobError(`ingest job ${jobId}'s records are missing from Redis although the job was not routed`);
  const count = lineCount(lines);
  if (count !== data.n) throw new UnreadableJobError(`ingest job ${jobId} says it holds ${data.n} records and its records key holds ${count}`);
  const skipping = skip !== undefined && skip.size > 0;
  const shared = data.at === undefined ? undefined : Buffer.from(`${RECEIVED_AT}${data.at}"`);
  if (!shared && !skipping) return { bytes: lines, count };
  // Large enough for every line to take the shared time; the unused end is cut off.
  const out = Buffer.allocUnsafe(lines.length + (shared ? data.n * shared.length : 0));
  let size = 0;
  let kept = 0;
  for (let start = 0, index = 0; ; index++) {
    const newline = lines.indexOf(NEWLINE, start);
    const end = newline < 0 ? lines.length : newline;
    if (!skipping || !skip.has(index)) {
      if (kept++ > 0) out[size++] = NEWLINE;
      const close = shared ? idEndIn(lines, start, end) : -1;
      if (shared && close < 0) throw new UnreadableJobError(`a line of an ingest job is not a record as the edge writes it: ${lines.subarray(start, Math.min(end, start + 80)).toString()}`);
      if (!shared || holdsAt(lines, RECEIVED_AT_BYTES, close + 1, end)) size += lines.copy(out, size, start, end);
      else {
        size += lines.copy(out, size, start, close + 1);
        size += shared.copy(out, size);
        size += lines.copy(out, size, close + 1, end);
      }
    }
    if (newline < 0) break;
    start = newline + 1;
  }
  return { bytes: out.subarray(0, size), count: kept };
}

function lineCount(lines: Buffer): number {
  let count = 1;
  for (let at = lines.indexOf(NEWLINE); at >= 0; at = lines.indexOf(NEWLINE, at + 1)) count++;
  return count;
}

/** Whether a queued job's texts may hold integers beyond 2^53 (read them with parseExactJson). */
export function queuedExact(data: QueuedJobData): boolean {
  return data.v === undefined ? data.exact !== undefined : data.x === 1;
}

/** `texts` without the records at the indices in `skip`. */
function withoutSkipped(texts: readonly string[], skip?: ReadonlySet<number>): string[] {
  return skip && skip.size > 0 ? texts.filter((_, i) => !skip.has(i)) : (texts as string[]);
}

/** Records as values from their texts: an integer beyond 2^53 as a bigint when `exact`. */
export function recordValuesOf(texts: readonly string[], exact: boolean): TrackedRecord[] {
  return texts.map((text) => (exact ? parseExactJson(text) : JSON.parse(text)) as TrackedRecord);
}
