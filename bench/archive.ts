/**
 * `npm run bench:archive` — what the archive costs: bytes a record on disk and CPU a record to write
 * it (from the stream's entries: decode, compress, checksum, append, fsync) and to read it back,
 * for stream blocks of 1, 10, 100 and 500 records (a quiet tracker's single events, a busy one's
 * group commits, arrays, an import's), in frames of 5 000 records as the archiver writes them;
 * each beside the same records all decoded and deflated again as lines (what the archiver did
 * before it kept large blocks as they are), and the records' own JSON text as the baseline of
 * size. ~300-byte events as bench/events.ts makes them, 200 000 by default (BENCH_ARCHIVE_RECORDS).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { v7 as uuidv7 } from 'uuid';
import { ArchiveFiles } from '../jobs/history/archive-files';
import { archiveParts } from '../jobs/history/archive-parts';
import { decodeEntries, type RawEntry } from '../jobs/delivery/stream-read';
import { entryFields } from '../jobs/routing/stream-entries';
import { partsSpan, type FramePart } from '../jobs/spill/frames';
import { makeEvents } from './events';
import { fmt } from './format';

const RECORDS = Number(process.env.BENCH_ARCHIVE_RECORDS ?? 200_000);
/** The archiver's default (jobs/history/archiver.ts). */
const FRAME_RECORDS = 5000;

function records(): string[] {
  const at = new Date().toISOString();
  return makeEvents(RECORDS, 5).map(({ _event, _uid, _sid, ...properties }) => JSON.stringify({ kind: 'event', id: uuidv7(), receivedAt: at, eventAt: at, event: _event, uid: _uid, sid: _sid, properties }));
}

const cpuSeconds = (from: NodeJS.CpuUsage) => {
  const u = process.cpuUsage(from);
  return (u.user + u.system) / 1e6;
};

/** The stream entries the router writes for `texts` in blocks of `size` (jobs/routing/stream-entries.ts). */
function streamEntries(texts: readonly string[], size: number): RawEntry[] {
  const base = Date.now();
  const entries: RawEntry[] = [];
  for (let i = 0; i < texts.length; i += size) {
    entries.push({ id: `${base + i}-0`, fields: entryFields(texts.slice(i, i + size)).map((f) => (typeof f === 'string' ? Buffer.from(f) : f)) });
  }
  return entries;
}

/** Every record decoded and deflated again as lines: the archiver before it kept large blocks. */
async function asLines(entries: readonly RawEntry[], cursor: string): Promise<FramePart[]> {
  return [{ lines: await decodeEntries(entries, cursor) }];
}

async function run(texts: string[], block: number, label: string, toParts: typeof archiveParts): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-archive-'));
  try {
    const entries = streamEntries(texts, block);
    const files = await ArchiveFiles.open(dir, null);
    let start = process.cpuUsage();
    const wall = performance.now();
    // Frames of about FRAME_RECORDS, whole entries, as the archiver reads them.
    const perFrame = Math.max(1, Math.ceil(FRAME_RECORDS / block));
    let cursor = '0-0';
    for (let i = 0; i < entries.length; i += perFrame) {
      const parts = await toParts(entries.slice(i, i + perFrame), cursor);
      await files.append(parts);
      cursor = partsSpan(parts).last;
    }
    const writeCpu = cpuSeconds(start);
    const writeWall = (performance.now() - wall) / 1000;
    const { bytes } = await files.size();
    start = process.cpuUsage();
    let read = 0;
    for await (const frame of files.read('0-0')) read += frame.length;
    const readCpu = cpuSeconds(start);
    await files.close();
    if (read !== texts.length) throw new Error(`read back ${read} of ${texts.length}`);
    console.log(
      `blocks of ${String(block).padStart(3)}, ${label.padEnd(26)} ${fmt(bytes / texts.length, 1).padStart(6)} bytes a record on disk, write ${fmt((writeCpu * 1e6) / texts.length, 2).padStart(5)} µs of CPU a record (${fmt(texts.length / writeWall)} records/s with one fsync a frame), read ${fmt((readCpu * 1e6) / texts.length, 2)} µs a record`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const texts = records();
  const json = texts.reduce((n, t) => n + Buffer.byteLength(t) + 1, 0) / texts.length;
  console.log(`archive: ${fmt(RECORDS)} events in frames of ~${fmt(FRAME_RECORDS)}, from stream blocks as routing writes them; baseline: their JSON text, ${fmt(json, 1)} bytes a record`);
  for (const block of [1, 10, 100, 500]) {
    await run(texts, block, 'all decoded, as lines:', asLines);
    await run(texts, block, 'as the archiver writes:', archiveParts);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
