import { setImmediate as nextTurn } from 'node:timers/promises';
import type { RedisClient } from '../../src/core/redis/cluster';
import type { FramedEntry } from '../spill/frames';
import { rangeStartAfter, recordsAfter } from '../routing/stream-entries';

/** Stream entries read by the first XRANGE; later pages are sized by the records per entry seen, up to MAX_PAGE_ENTRIES. */
const FIRST_PAGE_ENTRIES = 16;
const MAX_PAGE_ENTRIES = 100;

/**
 * Records decoded between two turns of the event loop. A frame is 5 000 records (the archiver's)
 * and decoding them at once held the loop for 10 ms and more, which in `npm start` is as long as a
 * live request waits (bench/RESULTS.md, "Where a live request waits during an import").
 */
const DECODE_SLICE_RECORDS = 500;

/**
 * The records of `stream` after `cursor`, whole entries only, until at least `wanted` are in hand
 * (or the stream ends): what goes to disk in one frame, so that a frame never ends inside a block
 * and the stream keeps no record that is on disk. Used by the spiller and the archiver.
 */
export async function readWholeEntries(redis: RedisClient, stream: string, cursor: string, wanted: number): Promise<FramedEntry[]> {
  const out: FramedEntry[] = [];
  let start = rangeStartAfter(cursor);
  let page = FIRST_PAGE_ENTRIES;
  let entriesRead = 0;
  let sinceTurn = 0;
  while (out.length < wanted) {
    const raw = await redis.xrangeBuffer(stream, start, '+', 'COUNT', page);
    if (raw.length === 0) break;
    const entries = raw.map(([id, fields]): [string, Buffer[]] => [id.toString(), fields]);
    for (const entry of entries) {
      if (out.length >= wanted) break;
      if (sinceTurn >= DECODE_SLICE_RECORDS) {
        await nextTurn();
        sinceTurn = 0;
      }
      const records = recordsAfter([entry], cursor);
      for (const { id, json } of records) out.push({ id, json });
      sinceTurn += records.length;
      entriesRead++;
    }
    start = `(${entries.at(-1)![0]}`;
    // Imported blocks hold hundreds of records, live ones a few: read about as many entries as the frame still needs.
    page = Math.max(1, Math.min(MAX_PAGE_ENTRIES, Math.ceil((wanted - out.length) / Math.max(1, out.length / entriesRead))));
  }
  return out;
}
