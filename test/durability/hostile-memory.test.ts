import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { request } from 'node:http';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { Redis } from 'ioredis';
import { TrackerStore } from '../../src/core/trackers/store';
import { generateToken } from '../../src/core/trackers/tokens';
import { TrackerSchema } from '../../src/core/trackers/types';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis';
import { freePort } from '../helpers/redis-server';
import { seededRandom } from '../helpers/seeded-random';
import { SERVER } from '../helpers/entries';
import { waitReady } from '../helpers/tributary-process';
import { serverNodeFlags } from '../helpers/start-flags';

/**
 * An API process under hostile load at the default limits: bodies at and over 1 MiB, gzip bombs
 * that decode to the 5 MiB limit, deep nesting, 60 KiB URLs, with 16 requests in flight. Its peak
 * resident memory (VmHWM) is printed and must stay within a bound docs/sending-data.md states ("Errors", memory under hostile load).
 * The process gets `start:api`'s node flags: V8's heap flags decide how far memory grows.
 */
jest.setTimeout(180_000);
const ROOT = path.join(__dirname, '..', '..');
/**
 * Alone the growth is 200–260 MiB; while the rest of the test run loads the machine, requests
 * overlap longer, more of their garbage is promoted before a full collection, and 410 MiB was seen.
 */
const PEAK_GROWTH_BOUND_MIB = 512;

function memoryMiB(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

/** Each 5xx answer's status and the start of its body, so that a failure says which refusal it was. */
const serverErrors: string[] = [];

function send(port: number, method: string, urlPath: string, headers: Record<string, string>, body?: Buffer): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, method, path: urlPath, headers: body ? { ...headers, 'content-length': String(body.length) } : headers, agent: false }, (res) => {
      const status = res.statusCode ?? 0;
      let text = '';
      res.on('data', (chunk: Buffer) => {
        if (status >= 500 && text.length < 300) text += chunk.toString('utf8');
      });
      res.on('end', () => {
        if (status >= 500) serverErrors.push(`${method} ${urlPath.slice(0, 60)} → ${status} ${text.slice(0, 300)}`);
        resolve(status);
      });
    });
    req.setTimeout(20_000, () => req.destroy());
    req.on('error', () => resolve(0));
    req.end(body);
  });
}

test('peak RSS of the API process under hostile requests stays bounded', async () => {
  const prefix = uniquePrefix('hostile');
  const redis = new Redis(TEST_REDIS_URL);
  const token = generateToken();
  await new TrackerStore(redis, prefix).save(TrackerSchema.parse({ id: 'shop', name: 'Shop', tokens: [{ token }] }));
  const port = await freePort();
  // Its own data directory: the API keeps its admin token there, and nothing goes into the checkout.
  const dataDir = mkdtempSync(path.join(tmpdir(), 'tributary-hostile-'));
  const child = spawn(process.execPath, [...serverNodeFlags('api'), SERVER, 'api'], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'error', REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: prefix, PORT: String(port), DATA_DIR: dataDir },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise((r) => child.once('exit', r));
  try {
    await waitReady(port, { child, output: () => stderr, exited: exited as Promise<number | null>, stop: async () => null });
    const before = memoryMiB(child.pid!);
    const rand = seededRandom(5);
    const auth = { authorization: `Tracker ${token}`, 'content-type': 'application/json' };
    const big = Buffer.from(JSON.stringify(Array.from({ length: 400 }, (_, i) => ({ _event: 'e', i, pad: 'p'.repeat(2400) }))));
    const bomb = gzipSync(Buffer.from(`[${Array.from({ length: 60_000 }, () => '{"a":[1,2,3,{"b":{}}]}').join(',')}]`));
    const kinds = [
      () => send(port, 'POST', '/v3/event', auth, big.subarray(0, 1_000_000)),
      () => send(port, 'POST', '/v3/event', auth, Buffer.alloc(2_000_000, '[')),
      () => send(port, 'POST', '/v3/event', { ...auth, 'content-encoding': 'gzip' }, bomb),
      () => send(port, 'POST', '/v3/event', auth, Buffer.from(`${'['.repeat(200_000)}${']'.repeat(200_000)}`)),
      () => send(port, 'GET', `/v3/event?_token=${token}&data=${'A'.repeat(60_000)}`, {}),
      () => send(port, 'POST', '/v3/event', auth, Buffer.from(JSON.stringify({ _event: 'x', s: 'z'.repeat(900_000) }))),
    ];
    let peakSeen = before.rss;
    const sampler = setInterval(() => (peakSeen = Math.max(peakSeen, memoryMiB(child.pid!).rss)), 25);
    let requests = 0;
    let fiveHundreds = 0;
    for (let round = 0; round < 60; round++) {
      const statuses = await Promise.all(Array.from({ length: 16 }, () => kinds[Math.floor(rand() * kinds.length)]!()));
      requests += statuses.length;
      fiveHundreds += statuses.filter((s) => s >= 500).length;
    }
    clearInterval(sampler);
    const after = memoryMiB(child.pid!);
    const growth = after.peak - before.rss;
    process.stdout.write(`hostile load: ${requests} requests; API RSS ${before.rss.toFixed(0)} MiB before, peak ${after.peak.toFixed(0)} MiB (VmHWM; sampled ${peakSeen.toFixed(0)}), ${after.rss.toFixed(0)} MiB after; growth ${growth.toFixed(0)} MiB\n`);
    expect({ fiveHundreds, serverErrors }).toEqual({ fiveHundreds: 0, serverErrors: [] });
    expect(growth).toBeLessThan(PEAK_GROWTH_BOUND_MIB);
  } finally {
    child.kill('SIGKILL');
    await exited;
    await deletePrefix(prefix);
    redis.disconnect();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
