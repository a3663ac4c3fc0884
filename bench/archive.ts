/**
 * `npm run bench:archive` — what the archive costs: bytes a record on disk and CPU a record to write
 * it (compress, checksum, append, fsync) and to read it back, for frames of 100, 1 000 and 5 000
 * records (a quiet tracker's second, a busy one's, a backlog's), beside the records' own JSON text
 * as the baseline of size. ~300-byte events as bench/events.ts makes them, 200 000 by default
 * (BENCH_ARCHIVE_RECORDS).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { v7 as uuidv7 } from 'uuid';
import { ArchiveFiles } from '../jobs/history/archive-files';
import { makeEvents } from './events';
import { fmt } from './format';

const RECORDS = Number(process.env.BENCH_ARCHIVE_RECORDS ?? 200_000);

function records(): string[] {
  const at = new Date().toISOString();
  return makeEvents(RECORDS, 5).map(({ _event, _uid, _sid, ...properties }) => JSON.stringify({ kind: 'event', id: uuidv7(), receivedAt: at, eventAt: at, event: _event, uid: _uid, sid: _sid, properties }));
}

const cpuSeconds = (from: NodeJS.CpuUsage) => {
  const u = process.cpuUsage(from);
  return (u.user + u.system) / 1e6;
};

async function run(texts: string[], frame: number): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-archive-'));
  try {
    const files = await ArchiveFiles.open(dir, null);
    const base = Date.now();
    let start = process.cpuUsage();
    const wall = performance.now();
    for (let i = 0; i < texts.length; i += frame) {
      const id = `${base + i}-0`;
      await files.append(texts.slice(i, i + frame).map((json, k) => ({ id: `${id}#${k}`, json })));
    }
    const writeCpu = cpuSeconds(start);
    const writeWall = (performance.now() - wall) / 1000;
    const { bytes } = await files.size();
    start = process.cpuUsage();
    let read = 0;
    for await (const entries of files.read('0-0')) read += entries.length;
    const readCpu = cpuSeconds(start);
    await files.close();
    if (read !== texts.length) throw new Error(`read back ${read} of ${texts.length}`);
    console.log(
      `frames of ${String(frame).padStart(5)}: ${fmt(bytes / texts.length, 1).padStart(6)} bytes a record on disk, write ${fmt((writeCpu * 1e6) / texts.length, 2)} µs of CPU a record (${fmt(texts.length / writeWall)} records/s with one fsync a frame), read ${fmt((readCpu * 1e6) / texts.length, 2)} µs a record`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const texts = records();
  const json = texts.reduce((n, t) => n + Buffer.byteLength(t) + 1, 0) / texts.length;
  console.log(`archive: ${fmt(RECORDS)} events; baseline: their JSON text, ${fmt(json, 1)} bytes a record`);
  for (const frame of [100, 1000, 5000]) await run(texts, frame);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
