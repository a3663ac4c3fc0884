import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { localConnector } from '../../connectors/local';
import { ConnectorRegistry } from '../../connectors/registry';
import type { Connector } from '../../connectors/types';
import { deliveryKeys } from '../../jobs/keys';
import { startWorkerRuntime, type WorkerRuntime } from '../../jobs/worker-runtime';
import { createLogger } from '../../src/core/logger';
import { startTestApi, type TestApi } from '../helpers/api';
import { OwnRedis } from '../helpers/redis-server';
import { waitFor } from '../helpers/wait';
import { cliRunner, type CliResult } from '../cli/run-cli';
import { eventRecord, seedDeadLetters } from '../cli/seed';

/**
 * A relay whose only destination is disabled, on a Redis of 24 MiB with noeviction: ingest fills
 * it to the high watermark and is refused cleanly; every operator command still works; freeing
 * memory brings ingest back.
 */
const MAXMEMORY = 24 * 1024 * 1024;
const FAST = { discoverIntervalMs: 50, leaseMs: 2000, delivery: { backoff: { baseMs: 10, maxMs: 50 }, maxRecordAttempts: 3, configRecheckMs: 100, pollMs: 100, writeTimeoutMs: 30_000 } };

let own: OwnRedis;
let api: TestApi;
let worker: WorkerRuntime;
let redis: Redis;
const dataDir = mkdtempSync(path.join(tmpdir(), 'tributary-memory-'));
const cli = cliRunner('unused');

beforeAll(async () => {
  own = await OwnRedis.start(['--maxmemory', String(MAXMEMORY), '--maxmemory-policy', 'noeviction', '--appendfsync', 'no']);
  redis = new Redis(own.url);
  api = await startTestApi({ DATA_DIR: dataDir, REDIS_MEMORY_SAMPLE_MS: '100', RETRY_AFTER_SECONDS: '7' }, { destinations: [{ id: 'wh', type: 'local', enabled: false, settings: {} }] }, own.url);
  const registry = new ConnectorRegistry([localConnector as Connector]);
  worker = await startWorkerRuntime(api.config, own.url, registry, createLogger('silent'), FAST);
}, 30_000);

afterAll(async () => {
  await worker?.close();
  await api?.close().catch(() => undefined);
  redis?.disconnect();
  await own?.destroy();
  rmSync(dataDir, { recursive: true, force: true });
  cli.cleanup();
});

/** The CLI against this test's Redis and data directory, as an operator on call would run it. */
async function tributary(...args: string[]): Promise<CliResult> {
  return cli.run(args, { REDIS_URL: own.url, REDIS_PREFIX: api.prefix, DATA_DIR: dataDir });
}

async function succeeds(...args: string[]): Promise<string> {
  const r = await tributary(...args);
  expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: '' });
  return r.stdout;
}

const batch = (n: number) => Array.from({ length: 100 }, (_, i) => ({ _event: 'page_view', page: `/catalog/item/${n}-${i}`, referrer: 'https://www.example.com/search?q=long+weekend', props: { plan: 'pro', n, i, pad: 'x'.repeat(120) } }));
const send = (n: number) => api.http.post('/v3/event').set('Authorization', `Tracker ${api.token}`).send(batch(n));
const info = async () => Object.fromEntries((await redis.info('memory')).split('\r\n').filter((l) => l.includes(':')).map((l) => l.split(':') as [string, string]));
const usedMemory = async () => Number((await info()).used_memory);
const ingestQueueEmpty = async () => (await redis.llen(`${api.prefix}:ingest:wait`)) === 0 && (await redis.llen(`${api.prefix}:ingest:active`)) === 0;

test('ingest is refused at the high watermark; every operator command works; freeing memory brings ingest back', async () => {
  // Dead letters an operator can discard: about a fifth of the budget.
  await seedDeadLetters(redis, api.prefix, api.tracker.id, 'wh', Array.from({ length: 9000 }, (_, i) => eventRecord(i, { properties: { pad: 'y'.repeat(300) } })));

  // Clients retry a 503: sent until the sampled memory is at the high watermark (/readyz says full).
  let refused: Awaited<ReturnType<typeof send>> | undefined;
  await waitFor(
    async () => {
      const res = await send(0);
      if (res.status === 503) refused = res;
      else expect(res.status).toBe(202);
      return (await api.http.get('/readyz')).status === 503;
    },
    { timeoutMs: 60_000, intervalMs: 1, message: '/readyz not ready' },
  );
  expect(refused).toBeDefined();
  expect(refused!.body.error.code).toBe('ERR_QUEUE_FULL');
  expect(refused!.headers['retry-after']).toBe('7');
  expect(refused!.body.error.message).not.toMatch(/OOM|script|maxmemory/);
  const pixel = await api.http.get(`/v3/event/tracker.gif?_token=${api.token}&_event=x`);
  expect(pixel.status).toBe(503);
  expect(pixel.headers['x-tributary-error']).toBe('ERR_QUEUE_FULL');

  // The router moves what was accepted to the destination's stream, within the reserve.
  await waitFor(ingestQueueEmpty, { timeoutMs: 20_000, message: 'the ingest queue routed' });
  expect(await usedMemory()).toBeLessThan(MAXMEMORY);

  const ready = await api.http.get('/readyz');
  expect(ready.status).toBe(503);
  expect(ready.body).toMatchObject({ status: 'full', redis: 'ok', memory: { state: 'full', limitBytes: MAXMEMORY, limitSource: 'redis' } });
  const metrics = (await api.http.get('/metrics')).text;
  expect(metrics).toContain(`tributary_redis_memory_limit_bytes ${MAXMEMORY}`);
  expect(metrics).toContain(`tributary_redis_memory_watermark_bytes{level="high"} ${Math.floor(MAXMEMORY * 0.9)}`);
  expect(metrics).toContain('tributary_redis_memory_state{state="full"} 1');
  const used = Number(/^tributary_redis_memory_used_bytes (\d+)$/m.exec(metrics)![1]);
  expect(used).toBeGreaterThanOrEqual(Math.floor(MAXMEMORY * 0.85));

  // Every operator command, while ingest is refused.
  expect(await succeeds('trackers', 'create', '--name', 'Second shop', '--id', 'second')).toContain('second');
  expect(await succeeds('destinations', 'add', 'second', '--type', 'local', '--id', 'spare', '--disabled')).toContain('spare');
  expect(await succeeds('destinations', 'enable', 'second', 'spare')).toContain('enabled');
  expect(await succeeds('destinations', 'disable', 'second', 'spare')).toContain('disabled');
  expect(await succeeds('destinations', 'test', api.tracker.id, 'wh')).toMatch(/ok/i);
  expect(await succeeds('destinations', 'remove', 'second', 'spare')).toContain('spare');
  const [oldest] = await redis.xrange(deliveryKeys(api.prefix, { trackerId: api.tracker.id, destinationId: 'wh' }).deadLetters, '-', '+', 'COUNT', 1);
  expect(await succeeds('dlq', 'replay', api.tracker.id, 'wh', '--id', oldest![0])).toMatch(/1 /);
  expect(await succeeds('dlq', 'discard', api.tracker.id, 'wh')).toMatch(/8[ ,.]?999/);

  // Discarding the dead letters freed a fifth of the budget: ingest comes back by itself.
  await waitFor(async () => (await api.http.get('/readyz')).status === 200, { timeoutMs: 10_000, message: 'ready again' });
  expect((await send(5000)).status).toBe(202);

  // Fill again, then enable the destination: delivery drains Redis and ingest comes back.
  await waitFor(async () => (await send(6000)).status === 503, { timeoutMs: 30_000, intervalMs: 1, message: 'full again' });
  expect(await succeeds('destinations', 'enable', api.tracker.id, 'wh')).toContain('enabled');
  await waitFor(async () => (await api.http.get('/readyz')).status === 200, { timeoutMs: 60_000, intervalMs: 200, message: 'delivered and ready again' });
  expect((await send(7000)).status).toBe(202);
}, 180_000);
