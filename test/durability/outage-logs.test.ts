import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { OwnRedis, freePort } from '../helpers/redis-server';
import { SERVER } from '../helpers/entries';
import { waitReady } from '../helpers/tributary-process';

/** During a Redis outage every line the process writes is a JSON log line: no raw error dumps. */
jest.setTimeout(60_000);
const ROOT = path.join(__dirname, '..', '..');

test('Redis killed under a running relay (API and delivery): stdout and stderr hold JSON lines only', async () => {
  const redis = await OwnRedis.start();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'tributary-outage-logs-'));
  const port = await freePort();
  const child = spawn(process.execPath, [SERVER, 'all'], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', REDIS_URL: redis.url, REDIS_PREFIX: 'outage', DATA_DIR: dataDir, PORT: String(port), DELIVERY_DISCOVER_INTERVAL_MS: '100' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const proc = { child, output: () => stdout + stderr, exited: new Promise<number | null>((r) => child.once('exit', r)), stop: async () => null };
  try {
    await waitReady(port, proc);
    const startup = stdout.length;
    await redis.stop('SIGKILL');
    // Requests and delivery keep running into the outage for a few seconds.
    for (let i = 0; i < 20; i++) {
      await fetch(`http://127.0.0.1:${port}/v3/event?_token=x&_event=e`).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 150));
    }
    const lines = (stdout.slice(startup) + stderr).split('\n').filter((l) => l.trim() !== '');
    const raw = lines.filter((l) => {
      try {
        JSON.parse(l);
        return false;
      } catch {
        return true;
      }
    });
    expect(raw).toEqual([]);
    // The outage was noticed and logged, through the logger.
    expect(lines.some((l) => /ECONNREFUSED|connection|Redis/i.test(l))).toBe(true);
  } finally {
    child.kill('SIGKILL');
    await proc.exited;
    await redis.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
