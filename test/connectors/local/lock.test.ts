import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
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
