import { createHash } from 'node:crypto';
import type { Limits } from '../config';
import type { ErrorCode } from '../errors';
import { stringifyExactJson } from '../records/exact-json';
import { normalizeRecord } from '../records/normalize';
import { applyPrivacy, privacyPlan } from '../records/privacy';
import type { RecordKind, TrackedRecord } from '../records/types';
import { partitionOf } from '../redis/keyspace';
import type { Tracker } from '../trackers/types';
import type { ImportItem } from './reader';

/**
 * An import: records read from a file or a request body, checked as the v3 edge checks them
 * (src/core/records/normalize.ts, then the tracker's personal-data rules), given a deterministic
 * `_id` when they have none, and handed to the history lane (jobs/history/import-lane.ts) a partition's
 * batch at a time. A line that is not a valid record is reported with its number and skipped; the
 * import goes on.
 */

/** Where an import's records go: one tracker partition's batch at a time (jobs/history/import-lane.ts). */
export interface ImportSink {
  write(tracker: Tracker, partition: number, records: { texts: readonly string[]; values: () => readonly TrackedRecord[] }, signal?: AbortSignal): Promise<void>;
}

export interface ImportLineError {
  line: number;
  code: ErrorCode;
  message: string;
  field?: string;
}

export interface ImportProgress {
  /** Records read (lines that were records or should have been). */
  read: number;
  /** Handed to the lane. */
  imported: number;
  /** Lines refused. */
  failed: number;
  /** The same `_id` met again within a batch: kept once. */
  duplicates: number;
}

export interface ImportSummary extends ImportProgress {
  /** The first MAX_REPORTED_ERRORS refusals, in line order; `failed` counts them all. */
  errors: ImportLineError[];
}

export interface ImportOptions {
  tracker: Tracker;
  kind: RecordKind;
  limits: Limits;
  sink: ImportSink;
  /** Added to each item's line number: a file sent in pieces keeps its lines' numbers, so their `_id`s. */
  lineOffset?: number;
  /** Records a partition's batch holds before it is written. Default 500. */
  batchRecords?: number;
  /** Called after each batch written, and once at the end. */
  onProgress?: (progress: ImportProgress) => void;
  signal?: AbortSignal;
}

export const MAX_REPORTED_ERRORS = 100;

/** Why a tracker cannot take an import, or undefined when it can. */
export function importRefusal(tracker: Pick<Tracker, 'id' | 'archiveDays' | 'destinations'>): string | undefined {
  if (tracker.destinations.length === 0 && tracker.archiveDays <= 0) return `Tracker ${tracker.id} has no destination and keeps no archive: an import would have nowhere to go. Add a destination first.`;
  return undefined;
}
const DEFAULT_BATCH_RECORDS = 500;

/**
 * The `_id` of an imported record that has none: a UUID (version 8: made by the application) from
 * the tracker, the resource, the line's number and its text, so that the same file imported again,
 * or again after a crash, gives every line the `_id` it had and destinations keep each once; two
 * equal lines of a file are two records.
 *
 * An event whose line gives `_event_at` (`eventAtMs`) has it in the first 48 bits, as a UUIDv7 has
 * its time: ids then grow with time as the relay's own do, so a file in time order adds to one end
 * of the local warehouse's `_id` index. Random ids made a writer's memory grow with the warehouse
 * (128 MiB ran out at 1.4 million imported events, 256 MiB at 2.9 million), where the relay's
 * time-ordered ids stayed within 128 MiB at 3.5 million (bench/RESULTS.md, "A 1 GB import").
 */
export function importedRecordId(trackerId: string, kind: RecordKind, line: number, text: string, eventAtMs?: number): string {
  return recordIdOf(lineHash(trackerId, kind, line, text), eventAtMs);
}

/** What an imported line's `_id` is made from: 64 hex digits. */
function lineHash(trackerId: string, kind: RecordKind, line: number, text: string): string {
  return createHash('sha256').update(`${trackerId}\n${kind}\n${line}\n${text}`).digest('hex');
}

function recordIdOf(lineHex: string, eventAtMs?: number): string {
  let hex = lineHex;
  if (eventAtMs !== undefined && Number.isSafeInteger(eventAtMs) && eventAtMs >= 0 && eventAtMs < 2 ** 48) hex = eventAtMs.toString(16).padStart(12, '0') + hex.slice(12);
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

interface Batch {
  texts: string[];
  values: TrackedRecord[];
  ids: Set<string>;
}

export async function importRecords(items: AsyncIterable<ImportItem>, opts: ImportOptions): Promise<ImportSummary> {
  const { tracker, kind, limits, sink } = opts;
  const offset = opts.lineOffset ?? 0;
  const batchRecords = opts.batchRecords ?? DEFAULT_BATCH_RECORDS;
  const privacy = tracker.privacyRules.length > 0 ? privacyPlan(tracker) : undefined;
  const summary: ImportSummary = { read: 0, imported: 0, failed: 0, duplicates: 0, errors: [] };
  const batches = new Map<number, Batch>();

  const refuse = (error: ImportLineError): void => {
    summary.failed++;
    if (summary.errors.length < MAX_REPORTED_ERRORS) summary.errors.push(error);
  };
  const flush = async (partition: number, batch: Batch): Promise<void> => {
    batches.delete(partition);
    await sink.write(tracker, partition, { texts: batch.texts, values: () => batch.values }, opts.signal);
    summary.imported += batch.texts.length;
    opts.onProgress?.({ ...summary });
  };

  for await (const item of items) {
    opts.signal?.throwIfAborted();
    summary.read++;
    const line = item.line + offset;
    if (item.error !== undefined || item.value === undefined) {
      refuse({ line, code: item.error?.code ?? 'ERR_INVALID_PAYLOAD', message: item.error?.message ?? 'Not a record.' });
      continue;
    }
    // `_received_at` is when the relay accepts a record: an import's are accepted now (an export of Tributary's own carries it).
    const { _received_at: _ignored, ...raw } = item.value;
    const hash = lineHash(tracker.id, kind, line, item.text);
    const lineId = recordIdOf(hash);
    const outcome = normalizeRecord({ kind, raw, id: lineId, invalidUnicode: tracker.invalidUnicode, receivedAt: new Date().toISOString(), timeZone: tracker.timeZone, limits });
    if (!outcome.ok) {
      refuse({ line, code: outcome.error.code, message: outcome.error.message, ...(outcome.error.field !== undefined ? { field: outcome.error.field } : {}) });
      continue;
    }
    const record = outcome.record;
    // Only a time the line gives: an event without `_event_at` takes the time of this import, which a second import would not repeat.
    if (record.id === lineId && raw._event_at !== undefined && raw._event_at !== null && record.eventAt !== undefined) record.id = recordIdOf(hash, Date.parse(record.eventAt));
    if (privacy) applyPrivacy(record, privacy);
    const partition = partitionOf(record, tracker.partitions);
    let batch = batches.get(partition);
    if (!batch) batches.set(partition, (batch = { texts: [], values: [], ids: new Set() }));
    if (batch.ids.has(record.id)) {
      summary.duplicates++;
      continue;
    }
    batch.ids.add(record.id);
    batch.texts.push(outcome.bigInts ? stringifyExactJson(record) : JSON.stringify(record));
    batch.values.push(record);
    if (batch.texts.length >= batchRecords) await flush(partition, batch);
  }
  for (const [partition, batch] of [...batches]) await flush(partition, batch);
  opts.onProgress?.({ ...summary });
  return summary;
}
