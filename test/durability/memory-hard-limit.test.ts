import { AuditLog } from '../../src/core/access/audit-log';
import { deliveryKeys } from '../../jobs/delivery/keys';
import { waitFor } from '../helpers/wait';
import { eventRecord, seedDeadLetters } from '../cli/seed';
import { startFullRedis, type FullRedis } from './full-redis';

/**
 * Redis itself at its limit: the budget is told of a limit ten times larger (as when another
 * application shares the Redis, or maxmemory was lowered), so ingest runs until Redis refuses
 * writes. Every operator command must still work, delivery must drain the full Redis once the
 * destination is enabled, and every acknowledged record must arrive exactly once.
 */
const MAXMEMORY = 16 * 1024 * 1024;
let f: FullRedis;

beforeAll(async () => {
  f = await startFullRedis(MAXMEMORY, { REDIS_MAXMEMORY_BYTES: String(MAXMEMORY * 10) });
}, 30_000);
afterAll(async () => {
  await f?.close();
});

const atTheLimit = async () => (await f.redis.set('probe', 'x'.repeat(64)).then(() => false, (err: Error) => err.message.startsWith('OOM ')));

/**
 * Memory moves a little on its own (client buffers, a CLI process's connection closing): filler
 * until Redis refuses, so the next command meets a Redis at its limit.
 */
async function fillToTheLimit(): Promise<void> {
  for (let i = 0; !(await atTheLimit()); i++) await f.redis.set(`filler:${Date.now()}:${i}`, 'x'.repeat(512)).catch(() => undefined);
}

/** Exit 0 and nothing on stderr, run on a Redis at its limit; returns stdout. */
async function succeedsAtTheLimit(...args: string[]): Promise<string> {
  await fillToTheLimit();
  return f.succeeds(...args);
}

test('with Redis at maxmemory, every operator command works and enabling the destination drains it', async () => {
  await seedDeadLetters(f.redis, f.api.prefix, f.api.tracker.id, 'wh', Array.from({ length: 200 }, (_, i) => eventRecord(i)));
  let accepted = 0;
  let refused: Awaited<ReturnType<FullRedis['send']>> | undefined;
  await waitFor(
    async () => {
      const res = await f.send(accepted);
      if (res.status === 202) accepted += res.body.accepted as number;
      else refused = res;
      return refused !== undefined && (await atTheLimit());
    },
    { timeoutMs: 60_000, intervalMs: 1, message: 'Redis at maxmemory' },
  );
  // Redis's refusal reaches the client in the relay's words, never Redis's.
  expect(refused!.status).toBe(503);
  expect(refused!.body.error.code).toBe('ERR_QUEUE_FULL');
  expect(JSON.stringify(refused!.body)).not.toMatch(/OOM|script|user_script/);

  // Every operator command, each on a Redis that refuses ordinary writes.
  expect(await succeedsAtTheLimit('trackers', 'create', '--name', 'Second shop', '--id', 'second')).toContain('second');
  expect(await succeedsAtTheLimit('destinations', 'add', 'second', '--type', 'local', '--id', 'spare', '--disabled')).toContain('spare');
  expect(await succeedsAtTheLimit('destinations', 'enable', 'second', 'spare')).toContain('enabled');
  expect(await succeedsAtTheLimit('destinations', 'disable', 'second', 'spare')).toContain('disabled');
  expect(await succeedsAtTheLimit('destinations', 'test', f.api.tracker.id, 'wh')).toMatch(/ok/i);
  expect(await succeedsAtTheLimit('destinations', 'remove', 'second', 'spare')).toContain('spare');
  const dlq = deliveryKeys(f.api.prefix, { trackerId: f.api.tracker.id, destinationId: 'wh' }).deadLetters;
  const [first, second] = await f.redis.xrange(dlq, '-', '+', 'COUNT', 2);
  expect(await succeedsAtTheLimit('dlq', 'replay', f.api.tracker.id, 'wh', '--id', first![0])).toMatch(/\b1\b/);
  expect(await succeedsAtTheLimit('dlq', 'discard', f.api.tracker.id, 'wh', '--id', second![0])).toMatch(/\b1\b/);

  // The console's doors to the same services (the admin API), each on a full Redis.
  const viaConsole = async (method: 'get' | 'post' | 'patch' | 'delete', url: string, body?: object) => {
    await fillToTheLimit();
    const res = await f.admin(method, url, body);
    expect({ url, status: res.status, error: res.body.error }).toEqual({ url, status: expect.any(Number), error: undefined });
    return res;
  };
  expect((await viaConsole('post', '/trackers/second/destinations', { type: 'local', id: 'console', enabled: false })).status).toBe(201);
  expect((await viaConsole('patch', '/trackers/second/destinations/console', { enabled: true })).body.enabled).toBe(true);
  expect((await viaConsole('patch', '/trackers/second/destinations/console', { enabled: false })).body.enabled).toBe(false);
  expect((await viaConsole('post', '/trackers/second/destinations/console/test')).body.ok).toBe(true);
  expect((await viaConsole('delete', '/trackers/second/destinations/console')).status).toBe(200);
  const [third] = await f.redis.xrange(dlq, '-', '+', 'COUNT', 1);
  expect((await viaConsole('post', `/trackers/${f.api.tracker.id}/destinations/wh/dead-letters/discard`, { ids: [third![0]] })).body.discarded).toBe(1);

  // Each of those changes has its audit entry, written on the full Redis too.
  const audited = (await new AuditLog(f.redis, f.api.prefix).list({ limit: 50 })).map((e) => `${e.action} ${e.outcome}`);
  expect(audited).toEqual(expect.arrayContaining(['cli trackers create ok', 'cli destinations remove ok', 'cli dlq discard ok', 'POST /trackers/:id/destinations ok', 'DELETE /trackers/:id/destinations/:dest ok']));

  // Enabling the destination is the way out: delivery takes the lease and confirms on a full Redis.
  expect(await succeedsAtTheLimit('destinations', 'enable', f.api.tracker.id, 'wh')).toContain('enabled');
  await waitFor(async () => (await f.send(accepted)).status === 202, { timeoutMs: 60_000, intervalMs: 200, message: 'ingest accepted again' });
  accepted += 100;
  await waitFor(f.ingestQueueEmpty, { timeoutMs: 30_000, message: 'the ingest queue routed' });
  await waitFor(async () => (await f.redis.xlen(deliveryKeys(f.api.prefix, { trackerId: f.api.tracker.id, destinationId: 'wh' }).stream)) === 0, { timeoutMs: 60_000, intervalMs: 200, message: 'the stream delivered' });

  // Every acknowledged record exactly once, and the replayed dead letter.
  const out = await f.succeeds('query', f.api.tracker.id, "select count(*) as n, count(distinct _id) as ids, count(*) filter (where _event = 'purchase') as replayed from events", '--json');
  const { rows } = JSON.parse(out) as { rows: number[][] };
  expect(rows[0]!.map(Number)).toEqual([accepted + 1, accepted + 1, 1]);
}, 240_000);
