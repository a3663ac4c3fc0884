import { setImmediate as nextTurn } from 'node:timers/promises';
import type { RedisClient } from '../../src/core/redis/cluster';
import type { FramedEntry } from '../spill/frames';
import { entryRecordCount, rangeStartAfter, recordsAfter } from '../routing/stream-entries';
import { compareStreamIds, entryIdOf } from './keys';

/** Stream entries read by the first XRANGE; later pages are sized by the records per entry seen, up to MAX_PAGE_ENTRIES. */
const FIRST_PAGE_ENTRIES = 16;
const MAX_PAGE_ENTRIES = 100;

/**
 * Records decoded between two turns of the event loop. A frame is 5 000 records (the archiver's)
 * and decoding them at once held the loop for 10 ms and more, which in `npm start` is as long as a
 * live request waits (bench/RESULTS.md, "Where a live request waits during an import").
 */
const DECODE_SLICE_RECORDS = 500;

/** A stream entry as XRANGE returns it, its fields as buffers. */
export interface RawEntry {
  id: string;
  fields: Buffer[];
}

/** Records of `entry` after `cursor`: all of them, unless the cursor is inside it (only the first entry read can hold it). */
function countAfter(entry: RawEntry, cursor: string): number {
  return compareStreamIds(entry.id, entryIdOf(cursor)) <= 0 ? recordsAfter([[entry.id, entry.fields]], cursor).length : entryRecordCount(entry.fields);
}

/**
 * The entries of `stream` after `cursor` (and the one holding it, when it is inside a block),
 * whole, until they hold at least `wanted` records after the cursor (or the stream ends), as
 * they are: the archiver keeps large blocks undecoded (jobs/history/archive-parts.ts).
 */
export async function readEntriesAfter(redis: RedisClient, stream: string, cursor: string, wanted: number): Promise<RawEntry[]> {
  const out: RawEntry[] = [];
  let records = 0;
  let start = rangeStartAfter(cursor);
  let page = FIRST_PAGE_ENTRIES;
  while (records < wanted) {
    const raw = await redis.xrangeBuffer(stream, start, '+', 'COUNT', page);
    if (raw.length === 0) break;
    for (const [id, fields] of raw) {
      if (records >= wanted) break;
      const entry = { id: id.toString(), fields };
      out.push(entry);
      records += countAfter(entry, cursor);
    }
    start = `(${out.at(-1)!.id}`;
    // Imported blocks hold hundreds of records, live ones a few: read about as many entries as the frame still needs.
    page = Math.max(1, Math.min(MAX_PAGE_ENTRIES, Math.ceil((wanted - records) / Math.max(1, records / out.length))));
  }
  return out;
}

/**
 * The records of `entries` after `cursor`, decoded a slice at a time between turns of the event
 * loop (see DECODE_SLICE_RECORDS).
 */
export async function decodeEntries(entries: readonly RawEntry[], cursor: string): Promise<FramedEntry[]> {
  const out: FramedEntry[] = [];
  let sinceTurn = 0;
  for (const entry of entries) {
    if (sinceTurn >= DECODE_SLICE_RECORDS) {
      await nextTurn();
      sinceTurn = 0;
    }
    const records = recordsAfter([[entry.id, entry.fields]], cursor);
    for (const { id, json } of records) out.push({ id, json });
    sinceTurn += records.length;
  }
  return out;
}

/**
 * The records of `stream` after `cursor`, whole entries only, until at least `wanted` are in hand
 * (or the stream ends): what goes to disk in one frame, so that a frame never ends inside a block
 * and the stream keeps no record that is on disk. Used by the spiller.
 */
export async function readWholeEntries(redis: RedisClient, stream: string, cursor: string, wanted: number): Promise<FramedEntry[]> {
  return decodeEntries(await readEntriesAfter(redis, stream, cursor, wanted), cursor);
}
