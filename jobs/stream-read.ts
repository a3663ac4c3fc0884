import type { RedisClient } from '../src/core/redis/cluster';
import type { FramedEntry } from './frames';
import { rangeStartAfter, recordsAfter } from './stream-entries';

/** Stream entries read per XRANGE while whole entries are gathered. */
const PAGE_ENTRIES = 100;

/**
 * The records of `stream` after `cursor`, whole entries only, until at least `wanted` are in hand
 * (or the stream ends): what goes to disk in one frame, so that a frame never ends inside a block
 * and the stream keeps no record that is on disk. Used by the spiller and the archiver.
 */
export async function readWholeEntries(redis: RedisClient, stream: string, cursor: string, wanted: number): Promise<FramedEntry[]> {
  const out: FramedEntry[] = [];
  let start = rangeStartAfter(cursor);
  while (out.length < wanted) {
    const raw = await redis.xrangeBuffer(stream, start, '+', 'COUNT', PAGE_ENTRIES);
    if (raw.length === 0) break;
    const entries = raw.map(([id, fields]): [string, Buffer[]] => [id.toString(), fields]);
    for (const entry of entries) {
      if (out.length >= wanted) break;
      for (const { id, json } of recordsAfter([entry], cursor)) out.push({ id, json });
    }
    start = `(${entries.at(-1)![0]}`;
  }
  return out;
}
