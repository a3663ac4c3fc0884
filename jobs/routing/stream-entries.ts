import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { compareStreamIds, entryIdOf, streamIdTime } from '../delivery/keys';

/**
 * How records sit in a destination's stream. The router writes a tracker partition's records of
 * one routing step for a destination as one entry, a block: `n <count> b1 <their JSON lines, raw
 * deflate with the preset dictionary below>`. A step is one ingest job, or under load the job in
 * hand and the jobs already waiting behind it (jobs/routing/route-run.ts), since a block's bytes per record
 * fall as it grows: a typical 450-byte stored event takes about 87 bytes of Redis in a block of 20,
 * 66 at 100 and about 258 alone, against about 460 as plain JSON in an entry of its own, at the
 * router's deflate level (ROUTED_LEVEL; bench/RESULTS.md).
 * A record in a block is known by `<entry id>#<k>` (k from 0), which orders after the entries
 * before it and before the ones after it. A record as plain `r <json>` keeps its entry's id:
 * replayed dead letters, a tracker's backlog, and streams written before blocks. An entry that
 * merges older ones (jobs/spill/compactor.ts) also holds `t <ms>`: when its oldest record was first
 * queued, which its own id no longer tells.
 */

/** One record as delivery sees it: its id (see above) and its JSON text. */
export interface StreamRecord {
  id: string;
  json: string;
  /** The last record of its entry. */
  endsEntry: boolean;
}

/**
 * Deflate's preset dictionary for field `b1`: the shapes and words stored records share, so that
 * even a record alone compresses. Never change it: entries written with it must stay readable. A
 * better one becomes `b2`, read beside this one.
 */
const DICTIONARY_1 = Buffer.from(
  [
    '{"kind":"user","id":"019aa6f0-0000-7000-8000-000000000000","receivedAt":"2026-01-01T00:00:00.000Z","uid":"","properties":{}}',
    '{"kind":"session","id":"019aa6f0-0000-7000-8000-000000000000","receivedAt":"2026-01-01T00:00:00.000Z","sid":"","uid":"","properties":{}}',
    '{"kind":"event","id":"019aa6f0-0000-7000-8000-000000000000","receivedAt":"2026-01-01T00:00:00.000Z","eventAt":"2026-01-01T00:00:00.000Z","event":"page_view","uid":"user-","sid":"sess-",' +
      '"properties":{"page":"/","path":"/","url":"https://www.","title":"","referrer":"https://www.google.com/","utm_source":"","utm_medium":"","utm_campaign":"","browser":"Chrome","os":"","device":"","country":"US","language":"en-US","screen_width":1920,"duration_ms":0,"amount":0,"price":0,"value":0,"currency":"USD","email":"","name":"","plan":"","product_id":"","order_id":"","quantity":1,"true":true,"false":false,"null":null}}',
  ].join('\n'),
);

/**
 * Deflate's levels: the router's blocks, written as records arrive and mostly delivered within a
 * second, take a fast one; the compactor's, written to stay while a destination does not deliver,
 * take zlib's default. In blocks of 100 typical events, level 3 costs about 1.9 µs of CPU a record
 * and the default 3.7–3.9, for 10% more bytes (bench/RESULTS.md). A reader needs no level.
 */
export const ROUTED_LEVEL = 3;
export const COMPACTED_LEVEL = 6;

/**
 * Records' JSON lines joined by newlines, as UTF-8: a block's content, for a writer that holds them
 * so already (the router, from an ingest job's records key: jobs/routing/ingest-job.ts `queuedLines`).
 */
export interface LineBlock {
  bytes: Buffer;
  count: number;
}

/** Record texts, or a LineBlock of them. */
export type BlockRecords = readonly string[] | LineBlock;

const isLineBlock = (records: BlockRecords): records is LineBlock => !Array.isArray(records);

/** How many records `records` holds. */
export const recordCountOf = (records: BlockRecords): number => (isLineBlock(records) ? records.count : records.length);

/** The texts of a LineBlock. */
export function lineTexts(block: LineBlock): string[] {
  return block.count === 0 ? [] : block.bytes.toString('utf8').split('\n');
}

/**
 * The fields of one stream entry holding `records` (JSON texts, which never contain a raw newline);
 * `queuedSince` (ms) when the records were queued before the entry is written.
 */
export function entryFields(records: BlockRecords, queuedSince?: number, level = ROUTED_LEVEL): Array<string | Buffer> {
  const content = isLineBlock(records) ? records.bytes : Buffer.from(records.join('\n'));
  const block = deflateRawSync(content, { dictionary: DICTIONARY_1, level });
  const fields: Array<string | Buffer> = ['n', String(recordCountOf(records)), 'b1', block];
  if (queuedSince !== undefined) fields.push('t', String(queuedSince));
  return fields;
}

/** A field's value of an entry as XRANGE returns it, if the entry has it. */
function fieldOf(fields: ReadonlyArray<string | Buffer>, name: string): string | Buffer | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) if (String(fields[i]) === name) return fields[i + 1];
  return undefined;
}

/** Records an entry holds, read from its fields without decoding its block. */
export function entryRecordCount(fields: ReadonlyArray<string | Buffer>): number {
  const n = fieldOf(fields, 'n');
  return n === undefined ? 1 : Number(String(n));
}

/** When the oldest record of an entry was queued (ms): its `t`, else its id's time. */
export function entryQueuedSince(id: string, fields: ReadonlyArray<string | Buffer>): number {
  const t = fieldOf(fields, 't');
  return t === undefined ? streamIdTime(id) : Number(String(t));
}

/** The record texts of a `b1` block (its deflated bytes). */
export function blockTexts(block: Buffer): string[] {
  return inflateRawSync(block, { dictionary: DICTIONARY_1 }).toString('utf8').split('\n');
}

const asBuffer = (value: string | Buffer): Buffer => (typeof value === 'string' ? Buffer.from(value, 'latin1') : value);

/** An entry's `b1` block as it is stored (deflated), with its record count; undefined for an entry of one plain record. */
export function entryBlock(fields: ReadonlyArray<string | Buffer>): { count: number; bytes: Buffer } | undefined {
  const block = fieldOf(fields, 'b1');
  return block === undefined ? undefined : { count: entryRecordCount(fields), bytes: asBuffer(block) };
}

/** The records of one entry as XRANGE returns it (fields read as buffers), with their ids. */
export function entryRecords(id: string, fields: ReadonlyArray<string | Buffer>): StreamRecord[] {
  const byName = new Map<string, string | Buffer>();
  for (let i = 0; i + 1 < fields.length; i += 2) byName.set(String(fields[i]), fields[i + 1]!);
  const single = byName.get('r');
  if (single !== undefined) return [{ id, json: String(single), endsEntry: true }];
  const block = byName.get('b1');
  if (block === undefined) throw new Error(`stream entry ${id} holds no record this version can read`);
  const lines = blockTexts(asBuffer(block));
  return lines.map((json, k) => ({ id: `${id}#${k}`, json, endsEntry: k === lines.length - 1 }));
}

/**
 * Records of `entries` after `cursor` (a record id), in order, at most `limit`. Entries are decoded
 * one at a time and decoding stops once `limit` records are in hand: a batch read from a backlog of
 * large blocks costs what the batch needs, not what the page holds. Only an entry at or before the
 * cursor's own can hold records at or before the cursor, so only those are compared record by record.
 */
export function recordsAfter(entries: ReadonlyArray<[string, ReadonlyArray<string | Buffer>]>, cursor: string, limit = Number.POSITIVE_INFINITY): StreamRecord[] {
  const out: StreamRecord[] = [];
  const cursorEntry = entryIdOf(cursor);
  for (const [id, fields] of entries) {
    if (out.length >= limit) break;
    const records = entryRecords(id, fields);
    const after = compareStreamIds(id, cursorEntry) <= 0 ? records.filter((r) => compareStreamIds(r.id, cursor) > 0) : records;
    for (const r of after) {
      if (out.length >= limit) break;
      out.push(r);
    }
  }
  return out;
}

/**
 * The XRANGE start that reads every record after `cursor`: the cursor's own entry when it is a
 * record inside a block (the rest of the block may be undelivered), else the entry after it.
 */
export function rangeStartAfter(cursor: string): string {
  return cursor.includes('#') ? entryIdOf(cursor) : `(${cursor}`;
}
