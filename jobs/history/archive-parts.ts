import { compareStreamIds, entryIdOf } from '../delivery/keys';
import { decodeEntries, type RawEntry } from '../delivery/stream-read';
import { entryBlock } from '../routing/stream-entries';
import type { FramePart } from '../spill/frames';

/**
 * Blocks of at least this many records go into the archive as the stream holds them; smaller ones
 * are decoded and deflated together. A block carries its own deflate stream, which costs little
 * once it is large and much when it is small: the typical event takes 53 bytes in blocks of 100,
 * 61 in blocks of 32, 80 in blocks of 10 and 206 alone, against 51 in a frame of 5 000 lines
 * (bench/RESULTS.md). Inflating and deflating every record again cost the worker about 13 µs a
 * record, which imports and arrays of events (large blocks) no longer pay.
 */
export const KEPT_BLOCK_RECORDS = 32;

/**
 * One archive frame's parts for the records of `entries` after `cursor` (jobs/delivery/stream-read.ts
 * readEntriesAfter): each large block as it is, runs of the rest as lines. A block that holds the
 * cursor is decoded, so that only its records after the cursor are kept.
 */
export async function archiveParts(entries: readonly RawEntry[], cursor: string): Promise<FramePart[]> {
  const parts: FramePart[] = [];
  let run: RawEntry[] = [];
  const endRun = async () => {
    const lines = await decodeEntries(run, cursor);
    if (lines.length > 0) parts.push({ lines });
    run = [];
  };
  const cursorEntry = entryIdOf(cursor);
  for (const entry of entries) {
    const block = entryBlock(entry.fields);
    if (block && block.count >= KEPT_BLOCK_RECORDS && compareStreamIds(entry.id, cursorEntry) > 0) {
      await endRun();
      parts.push({ block: { entryId: entry.id, count: block.count, bytes: block.bytes } });
    } else run.push(entry);
  }
  await endRun();
  return parts;
}
