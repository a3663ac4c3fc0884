import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConnectorRegistry } from '../../connectors/registry';
import { ArchiveFiles, dayOfId } from '../../jobs/history/archive-files';
import { readArchiveStatus } from '../../jobs/history/archive-status';
import { archiveDirectory, Archiver } from '../../jobs/history/archiver';
import { archiveKeys } from '../../jobs/delivery/keys';
import { LeaderLock } from '../../jobs/delivery/leader-lock';
import { startWorkerRuntime, type WorkerRuntime } from '../../jobs/worker-runtime';
import { entryBlock, entryFields } from '../../jobs/routing/stream-entries';
import { KEPT_BLOCK_RECORDS } from '../../jobs/history/archive-parts';
import { scanFrames } from '../../jobs/spill/frames';
import { createLogger } from '../../src/core/logger';
import type { TrackedRecord } from '../../src/core/records/types';
import { startTestApi, type TestApi } from '../helpers/api';
import { FAST_WORKER } from '../helpers/fast-worker';
import { createMemoryConnector } from '../helpers/memory-connector';
import { TEST_REDIS_URL } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

/**
 * The archive: every record a tracker accepted, as accepted, on disk, whatever its destinations
 * (none here), moved there exactly once from the stream the router fills; a crash between the
 * file and Redis leaves nothing twice; days past the retention go whole.
 */
let api: TestApi;
let worker: WorkerRuntime;

beforeAll(async () => {
  api = await startTestApi();
  worker = await startWorkerRuntime(api.config, TEST_REDIS_URL, new ConnectorRegistry([createMemoryConnector() as never]), createLogger('silent'), FAST_WORKER);
});
afterAll(async () => {
  await worker.close();
  await api.close();
});

async function readAll(files: ArchiveFiles): Promise<TrackedRecord[]> {
  const out: TrackedRecord[] = [];
  for await (const frame of files.read('0-0')) out.push(...frame.map((e) => JSON.parse(e.json) as TrackedRecord));
  return out;
}

test('what a tracker accepts is archived once, as accepted, with no destination at all', async () => {
  const { tracker, token } = await api.addTracker({ id: `arch-${randomUUID().slice(0, 8)}`, partitions: 2 });
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const res = await api.http.post('/v3/event').set('Authorization', `Tracker ${token}`).send(Array.from({ length: 40 }, (_, n) => ({ _event: 'view', _uid: `u${n % 7}`, n: i * 40 + n })));
    expect(res.status).toBe(202);
    ids.push(...res.body.results.map((r: { id: string }) => r.id));
  }
  const status = await waitFor(async () => {
    const s = await readArchiveStatus(api.runtime.redis, api.config.keyspace, tracker);
    return s.records === 200 && s.waiting === 0 ? s : undefined;
  }, { timeoutMs: 15_000, message: '200 records archived' });
  expect(status).toMatchObject({ days: 30, lastError: null });

  const archived: TrackedRecord[] = [];
  for (let partition = 0; partition < 2; partition++) {
    const keys = archiveKeys(api.config.keyspace.prefixOf({ trackerId: tracker.id, partition }), tracker.id, partition);
    const files = await ArchiveFiles.open(archiveDirectory(api.config.archiveDir, tracker.id, partition), await api.runtime.redis.get(keys.archived));
    archived.push(...(await readAll(files)));
    await files.close();
  }
  expect(archived.map((r) => r.id).sort()).toEqual([...ids].sort());
  expect(archived.find((r) => r.id === ids[0])).toMatchObject({ kind: 'event', event: 'view', properties: { n: 0 } });
});

test('a frame written and not committed (the process died) is cut off on open, and archived again once', async () => {
  const trackerId = `crash-${randomUUID().slice(0, 8)}`;
  const keys = archiveKeys(api.prefix, trackerId);
  const dir = mkdtempSync(path.join(tmpdir(), 'tributary-archive-'));
  try {
    const record = (n: number): TrackedRecord => ({ kind: 'event', id: `r${n}`, receivedAt: new Date().toISOString(), eventAt: new Date().toISOString(), event: 'e', properties: { n } });
    for (let step = 0; step < 3; step++) await api.runtime.redis.xadd(keys.stream, '*', ...entryFields([record(step * 2), record(step * 2 + 1)].map((r) => JSON.stringify(r))));
    const lock = new LeaderLock(api.runtime.redis, keys.lock, 5000);
    expect(await lock.acquire()).toBe(true);
    const files = await ArchiveFiles.open(dir, null);
    const archiver = new Archiver(api.runtime.redis, keys, lock, files, { days: 30, frameRecords: 2, checkMs: 10 }, createLogger('silent'));
    expect(await archiver.archiveFrame()).toBe(2);
    // The next frame reaches the disk, then the process dies before Redis hears of it.
    const entries = await api.runtime.redis.xrange(keys.stream, '-', '+', 'COUNT', 1);
    await files.append([{ lines: [{ id: `${entries[0]![0]}#0`, json: JSON.stringify(record(2)) }, { id: `${entries[0]![0]}#1`, json: JSON.stringify(record(3)) }] }]);
    await files.close();
    // And a torn write after it.
    const segment = readdirSync(dir)[0]!;
    appendFileSync(path.join(dir, segment), Buffer.from('TSP1\u0000\u0010garbage'));

    const reopened = await ArchiveFiles.open(dir, await api.runtime.redis.get(keys.archived));
    expect((await readAll(reopened)).map((r) => r.properties.n)).toEqual([0, 1]);
    const again = new Archiver(api.runtime.redis, keys, lock, reopened, { days: 30, frameRecords: 10, checkMs: 10 }, createLogger('silent'));
    expect(await again.archiveFrame()).toBe(4);
    expect(await again.archiveFrame()).toBe(0);
    expect((await readAll(reopened)).map((r) => r.properties.n)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(await api.runtime.redis.xlen(keys.stream)).toBe(0);
    await reopened.close();
    await lock.release();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('large blocks go to disk as the stream holds them, small ones and single records as lines, all read back in order with their stream ids', async () => {
  const trackerId = `blocks-${randomUUID().slice(0, 8)}`;
  const keys = archiveKeys(api.prefix, trackerId);
  const dir = mkdtempSync(path.join(tmpdir(), 'tributary-archive-'));
  try {
    let n = 0;
    const texts = (count: number) => Array.from({ length: count }, () => JSON.stringify({ kind: 'event', id: `r${n}`, receivedAt: new Date().toISOString(), eventAt: new Date().toISOString(), event: 'e', properties: { n: n++ } }));
    const sizes = [KEPT_BLOCK_RECORDS + 18, 1, 3, KEPT_BLOCK_RECORDS - 1, KEPT_BLOCK_RECORDS, 2];
    for (const size of sizes) await api.runtime.redis.xadd(keys.stream, '*', ...entryFields(texts(size)));
    const entries = await api.runtime.redis.xrangeBuffer(keys.stream, '-', '+');
    const lock = new LeaderLock(api.runtime.redis, keys.lock, 5000);
    expect(await lock.acquire()).toBe(true);
    const files = await ArchiveFiles.open(dir, null);
    const archiver = new Archiver(api.runtime.redis, keys, lock, files, { days: 30, frameRecords: 5000, checkMs: 10 }, createLogger('silent'));
    expect(await archiver.archiveFrame()).toBe(n);
    expect(await api.runtime.redis.xlen(keys.stream)).toBe(0);
    const lastEntry = entries.at(-1)![0].toString();
    expect(await api.runtime.redis.get(keys.archived)).toBe(`${lastEntry}#1`);

    // The two blocks of KEPT_BLOCK_RECORDS or more are in the file byte for byte; the rest was deflated again.
    const file = readFileSync(path.join(dir, readdirSync(dir)[0]!));
    expect(file.subarray(0, 4).toString('latin1')).toBe('TSP2');
    const kept = entries.map(([, fields]) => entryBlock(fields)!).filter((b) => b.count >= KEPT_BLOCK_RECORDS);
    expect(kept.map((b) => b.count)).toEqual([KEPT_BLOCK_RECORDS + 18, KEPT_BLOCK_RECORDS]);
    for (const block of kept) expect(file.indexOf(block.bytes)).toBeGreaterThan(0);

    const archived: Array<{ id: string; n: number }> = [];
    for await (const frame of files.read('0-0')) archived.push(...frame.map((e) => ({ id: e.id, n: (JSON.parse(e.json) as TrackedRecord).properties.n as number })));
    const expected = entries.flatMap(([id, fields], i) => Array.from({ length: sizes[i]! }, (_, k) => ({ id: `${id.toString()}#${k}`, n: 0 }))).map((e, i) => ({ ...e, n: i }));
    expect(archived).toEqual(expected);
    await files.close();
    await lock.release();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('segments are days: a range is read from its days, and retention deletes whole days', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'tributary-archive-'));
  try {
    const files = await ArchiveFiles.open(dir, null);
    const day = 86_400_000;
    const start = Date.UTC(2026, 9, 1, 10, 0);
    for (let d = 0; d < 4; d++) {
      for (let h = 0; h < 2; h++) {
        const at = start + d * day + h * 3_600_000;
        await files.append([{ lines: [0, 1].map((k) => ({ id: `${at}-0#${k}`, json: JSON.stringify({ d, h, k }) })) }]);
      }
    }
    expect(readdirSync(dir).sort()).toEqual(['2026-10-01.0000.arch', '2026-10-02.0000.arch', '2026-10-03.0000.arch', '2026-10-04.0000.arch']);
    const range: unknown[] = [];
    for await (const frame of files.read(`${start + day}-0`, `${start + 2 * day + 3_600_000}-0#0`)) range.push(...frame.map((e) => JSON.parse(e.json)));
    expect(range).toEqual([
      { d: 1, h: 0, k: 0 },
      { d: 1, h: 0, k: 1 },
      { d: 1, h: 1, k: 0 },
      { d: 1, h: 1, k: 1 },
      { d: 2, h: 0, k: 0 },
      { d: 2, h: 0, k: 1 },
      { d: 2, h: 1, k: 0 },
    ]);
    expect(await files.deleteDaysBefore(dayOfId(`${start + 2 * day}-0`))).toBe(2);
    expect((await files.size()).oldestDay).toBe('2026-10-03');
    await files.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('steady traffic is archived a frame each checkMs, and a backlog frame after frame without waiting', async () => {
  const trackerId = `cadence-${randomUUID().slice(0, 8)}`;
  const keys = archiveKeys(api.prefix, trackerId);
  const dir = mkdtempSync(path.join(tmpdir(), 'tributary-archive-'));
  const stop = new AbortController();
  const lock = new LeaderLock(api.runtime.redis, keys.lock, 5000);
  try {
    let n = 0;
    const add = () => api.runtime.redis.xadd(keys.stream, '*', ...entryFields([JSON.stringify({ kind: 'event', id: `r${n}`, receivedAt: new Date().toISOString(), eventAt: new Date().toISOString(), event: 'e', properties: { n: n++ } })]));
    const archivedCount = async () => Number((await api.runtime.redis.hget(keys.status, 'records')) ?? 0);
    expect(await lock.acquire()).toBe(true);
    const files = await ArchiveFiles.open(dir, null);
    // A backlog of 35 records in frames of 10: four frames in a row, though the next look is 10 s away.
    for (let i = 0; i < 35; i++) await add();
    const archiver = new Archiver(api.runtime.redis, keys, lock, files, { days: 30, frameRecords: 10, checkMs: 10_000 }, createLogger('silent'));
    const running = archiver.run(stop.signal);
    await waitFor(async () => ((await archivedCount()) === 35 ? true : undefined), { timeoutMs: 5000, message: 'the backlog archived without waiting for checkMs' });
    stop.abort();
    await running;

    // Then a record about every millisecond for a second, looked at every 400 ms: a few frames,
    // where archiving whenever a record waits made one for every few records.
    const steady = new AbortController();
    const again = new Archiver(api.runtime.redis, keys, lock, files, { days: 30, frameRecords: 5000, checkMs: 400 }, createLogger('silent'));
    const runningAgain = again.run(steady.signal);
    const until = Date.now() + 1000;
    while (Date.now() < until) {
      await add();
      await new Promise((r) => setTimeout(r, 1));
    }
    await waitFor(async () => ((await archivedCount()) === n ? true : undefined), { timeoutMs: 5000, message: 'the steady records archived' });
    steady.abort();
    await runningAgain;
    const frames = (await Promise.all(readdirSync(dir).map(async (name) => (await scanFrames(path.join(dir, name))).frames))).flat();
    expect(frames.reduce((sum, f) => sum + f.count, 0)).toBe(n);
    expect(n).toBeGreaterThan(100);
    // 4 for the backlog, then about one each look.
    expect(frames.length - 4).toBeLessThanOrEqual(6);
    await files.close();
  } finally {
    stop.abort();
    await lock.release();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('steps the capped stream dropped before they reached the disk are reported as a gap, and archiving goes on after it', async () => {
  const trackerId = `gap-${randomUUID().slice(0, 8)}`;
  const keys = archiveKeys(api.prefix, trackerId);
  const dir = mkdtempSync(path.join(tmpdir(), 'tributary-archive-'));
  try {
    const record = (n: number): TrackedRecord => ({ kind: 'event', id: `g${n}`, receivedAt: new Date().toISOString(), eventAt: new Date().toISOString(), event: 'e', properties: { n } });
    for (let n = 0; n < 3; n++) await api.runtime.redis.xadd(keys.stream, '*', ...entryFields([JSON.stringify(record(n))]));
    // What the router's cap does to a stream whose archiver is far behind.
    await api.runtime.redis.xtrim(keys.stream, 'MAXLEN', 1);
    const lock = new LeaderLock(api.runtime.redis, keys.lock, 5000);
    expect(await lock.acquire()).toBe(true);
    const files = await ArchiveFiles.open(dir, null);
    const archiver = new Archiver(api.runtime.redis, keys, lock, files, { days: 30, frameRecords: 10, checkMs: 10 }, createLogger('silent'));
    expect(await archiver.archiveFrame()).toBe(1);
    expect((await readAll(files)).map((r) => r.properties.n)).toEqual([2]);
    const status = await readArchiveStatus(api.runtime.redis, api.config.keyspace, { id: trackerId, partitions: 1, archiveDays: 30 });
    expect(status.lastGap).toMatch(/^2 routing steps after the start were dropped from the archive stream before they reached the disk/);
    expect(status.records).toBe(1);
    await files.close();
    await lock.release();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
