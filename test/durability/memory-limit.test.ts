import { createHmac, randomUUID } from 'node:crypto';
import { deliveryKeys } from '../../jobs/delivery/keys';
import { SourceService } from '../../src/operator/source-service';
import { waitFor } from '../helpers/wait';
import { eventRecord, seedDeadLetters } from '../cli/seed';
import { startFullRedis, type FullRedis } from './full-redis';

/**
 * A relay whose only destination is disabled, on a Redis of 24 MiB with noeviction: ingest fills
 * it to the high watermark and is refused cleanly; every operator command still works; freeing
 * memory brings ingest back.
 */
const MAXMEMORY = 24 * 1024 * 1024;
const SECRET = 'a-github-webhook-secret';
let f: FullRedis;

/** A signed GitHub delivery to the tracker's webhook source. */
function github() {
  const raw = JSON.stringify({ action: 'opened', number: 1 });
  const signature = `sha256=${createHmac('sha256', SECRET).update(raw).digest('hex')}`;
  return f.api.http.post(`/v3/webhooks/${f.api.tracker.id}/github`).set('Content-Type', 'application/json').set({ 'X-GitHub-Event': 'issues', 'X-GitHub-Delivery': randomUUID(), 'X-Hub-Signature-256': signature }).send(raw);
}

beforeAll(async () => {
  f = await startFullRedis(MAXMEMORY, { RETRY_AFTER_SECONDS: '7' });
  await new SourceService(f.api.runtime.store).add(f.api.tracker.id, { type: 'github', secret: SECRET });
}, 30_000);
afterAll(async () => {
  await f?.close();
});

test('ingest is refused at the high watermark; every operator command works; freeing memory brings ingest back', async () => {
  // Dead letters an operator can discard: about a fifth of the budget.
  await seedDeadLetters(f.redis, f.api.prefix, f.api.tracker.id, 'wh', Array.from({ length: 9000 }, (_, i) => eventRecord(i, { properties: { pad: 'y'.repeat(300) } })));

  // Clients retry a 503: sent until the sampled memory is at the high watermark (/readyz says full).
  // A write is refused only once Redis is measured there, so the answers up to then are 202 or 503.
  await waitFor(
    async () => {
      expect([202, 503]).toContain((await f.send(0)).status);
      return (await f.api.http.get('/readyz')).status === 503;
    },
    { timeoutMs: 60_000, intervalMs: 1, message: '/readyz not ready' },
  );
  const refused = await f.send(0);
  expect(refused.status).toBe(503);
  expect(refused.body.error.code).toBe('ERR_QUEUE_FULL');
  expect(refused.headers['retry-after']).toBe('7');
  expect(refused.body.error.message).not.toMatch(/OOM|script|maxmemory/);
  const pixel = await f.api.http.get(`/v3/event/tracker.gif?_token=${f.api.token}&_event=x`);
  expect(pixel.status).toBe(503);
  expect(pixel.headers['x-tributary-error']).toBe('ERR_QUEUE_FULL');
  const webhook = await github();
  expect(webhook.status).toBe(503);
  expect(webhook.body.error.code).toBe('ERR_QUEUE_FULL');
  expect(webhook.headers['retry-after']).toBe('7');

  // The router moves what was accepted to the destination's stream, within the reserve.
  await waitFor(f.ingestQueueEmpty, { timeoutMs: 20_000, message: 'the ingest queue routed' });
  expect(await f.usedMemory()).toBeLessThan(MAXMEMORY);

  const ready = await f.api.http.get('/readyz');
  expect(ready.status).toBe(503);
  expect(ready.body).toMatchObject({ status: 'full', redis: 'ok', memory: { state: 'full', limitBytes: MAXMEMORY, limitSource: 'redis' } });
  const metrics = (await f.api.http.get('/metrics')).text;
  expect(metrics).toContain(`tributary_redis_memory_limit_bytes ${MAXMEMORY}`);
  expect(metrics).toContain(`tributary_redis_memory_watermark_bytes{level="high"} ${Math.floor(MAXMEMORY * 0.9)}`);
  expect(metrics).toContain('tributary_redis_memory_state{state="full"} 1');
  const used = Number(/^tributary_redis_memory_used_bytes (\d+)$/m.exec(metrics)![1]);
  expect(used).toBeGreaterThanOrEqual(Math.floor(MAXMEMORY * 0.85));

  // Every operator command, while ingest is refused.
  expect(await f.succeeds('trackers', 'create', '--name', 'Second shop', '--id', 'second')).toContain('second');
  expect(await f.succeeds('destinations', 'add', 'second', '--type', 'local', '--id', 'spare', '--disabled')).toContain('spare');
  expect(await f.succeeds('destinations', 'enable', 'second', 'spare')).toContain('enabled');
  expect(await f.succeeds('destinations', 'disable', 'second', 'spare')).toContain('disabled');
  expect(await f.succeeds('destinations', 'test', f.api.tracker.id, 'wh')).toMatch(/ok/i);
  expect(await f.succeeds('destinations', 'remove', 'second', 'spare')).toContain('spare');
  const [oldest] = await f.redis.xrange(deliveryKeys(f.api.prefix, { trackerId: f.api.tracker.id, destinationId: 'wh' }).deadLetters, '-', '+', 'COUNT', 1);
  expect(await f.succeeds('dlq', 'replay', f.api.tracker.id, 'wh', '--id', oldest![0])).toMatch(/1 /);
  expect(await f.succeeds('dlq', 'discard', f.api.tracker.id, 'wh')).toMatch(/8[ ,.]?999/);

  // Discarding the dead letters freed a fifth of the budget: ingest comes back by itself.
  await waitFor(async () => (await f.api.http.get('/readyz')).status === 200, { timeoutMs: 10_000, message: 'ready again' });
  expect((await f.send(5000)).status).toBe(202);
  expect((await github()).status).toBe(200);

  // Fill again, then enable the destination: delivery drains Redis and ingest comes back.
  await waitFor(async () => (await f.send(6000)).status === 503, { timeoutMs: 30_000, intervalMs: 1, message: 'full again' });
  expect(await f.succeeds('destinations', 'enable', f.api.tracker.id, 'wh')).toContain('enabled');
  await waitFor(async () => (await f.api.http.get('/readyz')).status === 200, { timeoutMs: 60_000, intervalMs: 200, message: 'delivered and ready again' });
  expect((await f.send(7000)).status).toBe(202);
}, 180_000);
