import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import { RetryableError } from '../../../connectors/errors';
import { queryWarehouse } from '../../../connectors/local';
import { allOk, event, openFixture, type LocalFixture } from './helpers';

const repoRoot = path.resolve(__dirname, '../../..');

/** Another process that opens the warehouse for writing and keeps it, as a second worker would. */
async function holdFile(file: string): Promise<ChildProcessWithoutNullStreams> {
  const script = `require('@duckdb/node-api').DuckDBInstance.create(${JSON.stringify(file)}).then(() => { process.stdout.write('ready\\n'); setInterval(() => {}, 1000); }, (e) => { console.error(e.message); process.exit(1); });`;
  const child = spawn(process.execPath, ['-e', script], { cwd: repoRoot });
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`lock holder exited with ${code}`)));
  });
  return child;
}

async function stop(child: ChildProcessWithoutNullStreams): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

describe('local warehouse: one writer process', () => {
  let fx: LocalFixture;
  let holder: ChildProcessWithoutNullStreams | undefined;
  beforeEach(async () => {
    fx = await openFixture();
    await mkdir(path.dirname(fx.file), { recursive: true });
    holder = await holdFile(fx.file);
  });
  afterEach(async () => {
    if (holder) await stop(holder);
    await fx.cleanup();
  });

  it('answers a write with RetryableError naming the process that holds the file, and recovers once it is gone', async () => {
    const err = await fx.write([event('view', {})]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RetryableError);
    expect((err as RetryableError).message).toMatch(/is open in another process \(.*PID \d+.*\); DuckDB allows one writer process per file/);
    expect((err as RetryableError).details.reason).toBe('locked');

    await stop(holder!);
    holder = undefined;
    expect(allOk(await fx.write([event('view', {})]))).toBe(true);
  });

  it('gives up a read after the lock timeout with RetryableError', async () => {
    const err = await queryWarehouse(fx.file, 'SELECT 1', { lockTimeoutMs: 200 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RetryableError);
    expect((err as Error).message).toMatch(/held by another process that did not release it within 200 ms/);
  });
});

describe('local warehouse: two relay processes writing one file', () => {
  /** Writes as writer-child.ts for `ms`; resolves with when it was ready and the times of its writes that succeeded. */
  function writeFor(dataDir: string, name: string, ms: number): Promise<{ ready: number; writes: number[] }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'fixtures/writer-child.ts'), dataDir, name, String(ms)], { cwd: repoRoot });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.once('exit', (code) => {
        if (code !== 0) return reject(new Error(`writer ${name} exited with ${code}: ${err}`));
        const [first, ...lines] = out.trim().split('\n');
        const writes = lines.map((line) => JSON.parse(line) as { at: number; ok: boolean });
        resolve({ ready: (JSON.parse(first!) as { ready: number }).ready, writes: writes.filter((w) => w.ok).map((w) => w.at) });
      });
    });
  }

  it('take turns: neither waits much longer than a turn while the other keeps writing', async () => {
    const fx = await openFixture();
    try {
      await fx.writer.close();
      const [a, b] = await Promise.all([writeFor(fx.dataDir, 'a', 12_000), writeFor(fx.dataDir, 'b', 12_000)]);
      // Each got the file several times, and no write waited more than a turn (2 s), the
      // other's batch and a handover's checkpoint: without turns, the first to open kept the file
      // while it kept writing, and the other's every write failed as locked. Waits count from the
      // moment each writer was ready, not from its process's start.
      for (const [name, { ready, writes }] of [['a', a], ['b', b]] as const) {
        const gaps = [writes[0]! - ready, ...writes.slice(1).map((at, i) => at - writes[i]!)];
        const longest = Math.max(...gaps);
        const over = gaps.flatMap((ms, i) => (ms > 2_000 ? [`${ms} ms before write ${i}`] : []));
        expect({ name, enough: writes.length > 10 }).toEqual({ name, enough: true });
        expect(longest < 6_000 ? 'ok' : `writer ${name} of ${writes.length} writes waited ${over.join(', ')}`).toBe('ok');
      }
      const rows = await fx.rows('SELECT _event, count(*)::INT AS n FROM events GROUP BY _event ORDER BY _event');
      expect(rows).toEqual([
        { _event: 'a', n: a.writes.length * 20 },
        { _event: 'b', n: b.writes.length * 20 },
      ]);
    } finally {
      await fx.cleanup();
    }
  }, 60_000);
});

describe('local warehouse: a reader and the writer in one process', () => {
  it("a query from another copy of the modules (the console on npm start's API thread, the writer on its delivery thread) waits for the writer to let go", async () => {
    const fx = await openFixture();
    try {
      expect(allOk(await fx.write([event('view', {})], { resend: false }))).toBe(true);
      const holders = async () => (await readdir(path.dirname(fx.file))).filter((name) => name.includes('.holder-'));
      expect(await holders()).toHaveLength(1);
      let apiThread: typeof import('../../../connectors/local') | undefined;
      jest.isolateModules(() => {
        apiThread = require('../../../connectors/local') as typeof import('../../../connectors/local');
      });
      const result = await apiThread!.queryWarehouse(fx.file, 'SELECT count(*)::INT AS n FROM events');
      expect(result.rows).toEqual([[1]]);
      // DuckDB's lock does not keep two instances of one process apart: the reader opened only
      // once the writer had closed the file (and it has not opened it again since).
      expect(await holders()).toEqual([]);
    } finally {
      await fx.cleanup();
    }
  });
});

