import { createHmac, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import * as z from 'zod';
import { PermanentError } from '../../connectors/errors';
import { localConnector, queryWarehouse } from '../../connectors/local';
import { ConnectorRegistry } from '../../connectors/registry';
import type { Connector } from '../../connectors/types';
import { DeadLetterStore } from '../../jobs/delivery/dead-letters';
import { deliveryKeys } from '../../jobs/delivery/keys';
import { startWorkerRuntime, type WorkerRuntime } from '../../jobs/worker-runtime';
import { generateAdminToken } from '../../src/admin/admin-token';
import { createLogger } from '../../src/core/logger';
import { SourceService } from '../../src/operator/source-service';
import { startTestApi, type TestApi } from '../helpers/api';
import { TEST_REDIS_URL } from '../helpers/redis';
import { openSse, type SseConnection } from '../helpers/sse';
import { waitFor } from '../helpers/wait';

/**
 * A tracker with personal-data rules, fed through every door (JSON, form, curl's JSON-as-form,
 * GET parameters, data=, the pixel, a webhook source; users, sessions and events): the raw values
 * are nowhere in Redis, in the live view, in the dead letters or in the local warehouse.
 */
jest.setTimeout(120_000);

const tag = randomUUID().slice(0, 8);
const EMAIL = `ada.${tag}@example.com`;
const NOTE = `drop-me-${tag}`;
const PHONE = `+33-${tag}`;
const PROPERTY_IP = '198.51.100.77';
const CLIENT_IP = '203.0.113.77';
const RAW = [EMAIL, NOTE, PHONE, PROPERTY_IP, CLIENT_IP];
const GITHUB_SECRET = 'privacy-github-secret';

/** Every record refused by this destination: each one becomes a dead letter. */
const refusingConnector: Connector<{ reason: string }> = {
  type: 'refusing',
  description: 'refuses every record permanently',
  settingsSchema: z.object({ reason: z.string() }),
  batch: { maxRecords: 100, maxAgeMs: 20 },
  async open() {
    return {
      write: async (records) => records.map(() => ({ status: 'failed' as const, error: new PermanentError('refused for the test', { status: 400 }) })),
      test: async () => undefined,
      close: async () => undefined,
    };
  },
};

const dataDir = mkdtempSync(path.join(tmpdir(), 'tributary-privacy-'));
const adminToken = generateAdminToken();
const registry = new ConnectorRegistry([localConnector as Connector, refusingConnector as Connector]);
let api: TestApi;
let server: http.Server;
let base: string;
let worker: WorkerRuntime | undefined;
let redis: Redis;
let listener: Redis;
const published: string[] = [];
let live: SseConnection;

const admin = (method: 'get' | 'post' | 'patch' | 'delete', url: string) => api.http[method](`/admin/api${url}`).set('Authorization', `Bearer ${adminToken}`);

beforeAll(async () => {
  api = await startTestApi({ DATA_DIR: dataDir, TRUST_PROXY: 'true' }, {}, TEST_REDIS_URL, { token: adminToken, registry });
  server = http.createServer(api.runtime.app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  redis = new Redis(TEST_REDIS_URL);
  listener = new Redis(TEST_REDIS_URL);
  await listener.psubscribe(`${api.prefix}:*`);
  listener.on('pmessage', (_pattern, _channel, message: string) => published.push(message));
  await api.runtime.store.update(api.tracker.id, (t) => ({
    ...t,
    captureContext: true,
    destinations: [
      { id: 'wh', type: 'local', enabled: true, settings: {} },
      { id: 'dlq', type: 'refusing', enabled: true, settings: { reason: 'test' } },
    ],
  }));
  await new SourceService(api.runtime.store).add(api.tracker.id, { type: 'github', secret: GITHUB_SECRET });
});

afterAll(async () => {
  live?.abort();
  await worker?.close();
  listener.disconnect();
  redis.disconnect();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await api.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Every value stored under the test's prefix, whatever its type, as text. */
async function dumpRedis(): Promise<string> {
  const out: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${api.prefix}:*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const type = await redis.type(key);
      const value =
        type === 'string' ? await redis.get(key)
        : type === 'hash' ? await redis.hgetall(key)
        : type === 'list' ? await redis.lrange(key, 0, -1)
        : type === 'set' ? await redis.smembers(key)
        : type === 'zset' ? await redis.zrange(key, '0', '-1')
        : type === 'stream' ? await redis.xrange(key, '-', '+')
        : `(${type})`;
      out.push(`${key} ${JSON.stringify(value)}`);
    }
  } while (cursor !== '0');
  return out.join('\n');
}

function expectNoRawValue(text: string, where: string): void {
  for (const raw of RAW) {
    if (text.includes(raw)) throw new Error(`${where} holds the raw value ${raw}: …${text.slice(Math.max(0, text.indexOf(raw) - 200), text.indexOf(raw) + 100)}…`);
  }
}

const hmac = (secret: string, text: string) => createHmac('sha256', secret).update(text).digest('hex');
const masked = `a***@example.com`;

test('rules set through the admin API; an invalid rule is refused by name', async () => {
  const patched = await admin('patch', `/trackers/${api.tracker.id}`).send({
    privacyRules: [
      { property: 'email', action: 'mask-email' },
      { property: 'note', action: 'drop' },
      { property: '/billing/email', action: 'hash' },
      { property: '/contacts/*/phone', action: 'hash' },
    ],
  });
  expect(patched.status).toBe(200);
  for (const rule of [
    { property: 'client_ip', action: 'truncate-ip' },
    { property: '_uid', action: 'hash' },
    { property: '_ip', action: 'truncate-ip' },
    { property: '/sender/email', action: 'hash' },
  ]) {
    expect((await admin('post', `/trackers/${api.tracker.id}/privacy-rules`).send(rule)).status).toBe(200);
  }
  const bad = await admin('post', `/trackers/${api.tracker.id}/privacy-rules`).send({ property: '_event', action: 'hash' });
  expect(bad.status).toBe(400);
  expect(bad.body.error).toMatchObject({ code: 'ERR_ADMIN_INVALID', field: 'privacyRules.8.property', message: expect.stringContaining('rule _event → hash: _event is a reserved field') });

  const tracker = await admin('get', `/trackers/${api.tracker.id}`);
  expect(tracker.body.privacyRules).toHaveLength(8);
  // The HMAC key is made with the first hash rule and never shown by the admin API.
  expect(tracker.body.privacySecret).toBe('[redacted]');
  expect((await api.runtime.store.get(api.tracker.id))!.privacySecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
  const view = await admin('get', `/trackers/${api.tracker.id}/integration`);
  expect(view.body.privacyRules).toContainEqual({ property: 'email', action: 'mask-email', effect: expect.stringContaining('a***@example.com') });
});

test('no raw value reaches Redis, the live view, the dead letters or the warehouse', async () => {
  const { token } = api;
  const auth = `Tracker ${token}`;
  live = await openSse(`${base}/admin/api/trackers/${api.tracker.id}/live`, { Authorization: `Bearer ${adminToken}` });
  expect((await live.reader.next()).event).toBe('ready');

  const sent: Array<Promise<{ status: number }>> = [];
  const send = (req: PromiseLike<{ status: number }>) => sent.push(Promise.resolve(req));
  send(api.http.post('/v3/user').set('Authorization', auth).set('X-Forwarded-For', CLIENT_IP).send({ _uid: EMAIL, email: EMAIL, note: NOTE, billing: { email: EMAIL, country: 'FR' } }));
  send(api.http.post('/v3/session').set('Authorization', auth).type('form').send(`_sid=s-${tag.slice(0, 4)}&_uid=${encodeURIComponent(EMAIL)}&client_ip=${PROPERTY_IP}&note=${NOTE}`));
  send(api.http.get(`/v3/event?_token=${token}&_event=view&email=${encodeURIComponent(EMAIL)}&note=${NOTE}&client_ip=${PROPERTY_IP}`).set('X-Forwarded-For', CLIENT_IP));
  const data = Buffer.from(JSON.stringify({ _event: 'data', _uid: EMAIL, contacts: [{ phone: PHONE }, { phone: PHONE, kind: 'work' }], email: EMAIL })).toString('base64url');
  send(api.http.get(`/v3/event?_token=${token}&data=${data}`));
  // curl -d '[…]' without a Content-Type: a form body that is JSON.
  send(api.http.post('/v3/event').set('Authorization', auth).type('form').send(JSON.stringify([{ _event: 'signup', email: EMAIL, note: NOTE }])));
  send(api.http.get(`/v3/event/tracker.gif?_token=${token}&_event=pixel&email=${encodeURIComponent(EMAIL)}`));
  const body = JSON.stringify({ action: 'opened', sender: { email: EMAIL, login: 'ada' }, note: NOTE });
  send(
    api.http
      .post(`/v3/webhooks/${api.tracker.id}/github`)
      .set({ 'Content-Type': 'application/json', 'X-GitHub-Event': 'issues', 'X-GitHub-Delivery': `d-${tag}`, 'X-Hub-Signature-256': `sha256=${hmac(GITHUB_SECRET, body)}` })
      .send(body),
  );
  // Refused (no _event): never stored, and the live view does not show its parameters raw.
  send(api.http.get(`/v3/event?_token=${token}&email=${encodeURIComponent(EMAIL)}`));
  // Refused before its tracker is known (malformed JSON): the live view finds the tracker by the token, and redacts too.
  send(api.http.post(`/v3/event?_token=${token}&email=${encodeURIComponent(EMAIL)}`).set('Content-Type', 'application/json').send('{"_event":'));
  const statuses = (await Promise.all(sent)).map((r) => r.status);
  expect(statuses).toEqual([202, 202, 202, 202, 202, 200, 200, 400, 400]);

  const entries = await waitFor(() => (live.reader.pending().filter((e) => e.event === 'request').length >= statuses.length ? live.reader.pending() : undefined), { timeoutMs: 10_000, message: 'a live entry per request' });
  expectNoRawValue(JSON.stringify(entries), 'the live view');
  expect(JSON.stringify(entries)).toContain(masked);
  expectNoRawValue(published.join('\n'), 'Redis pub/sub');
  expectNoRawValue(await dumpRedis(), 'Redis (queued)');

  worker = await startWorkerRuntime(api.config, TEST_REDIS_URL, registry, createLogger('silent'), {
    discoverIntervalMs: 50,
    delivery: { backoff: { baseMs: 50, maxMs: 200 }, maxRecordAttempts: 3, configRecheckMs: 200, pollMs: 100, writeTimeoutMs: 30_000 },
  });
  const deadLetters = new DeadLetterStore(redis, deliveryKeys(api.prefix, { trackerId: api.tracker.id, destinationId: 'dlq' }));
  // 1 user, 1 session, 5 events (view, data, signup, pixel, webhook).
  await waitFor(async () => ((await deadLetters.count()) >= 7 ? true : undefined), { timeoutMs: 60_000, intervalMs: 100, message: '7 dead letters' });
  const file = path.join(dataDir, 'warehouse', `${api.tracker.id}.duckdb`);
  const tables = await waitFor(
    async () => {
      try {
        const [users, sessions, events] = await Promise.all(['users', 'sessions', 'events'].map((t) => queryWarehouse(file, `select * from ${t}`)));
        return events!.rows.length >= 5 && users!.rows.length >= 1 && sessions!.rows.length >= 1 ? { users: users!, sessions: sessions!, events: events! } : undefined;
      } catch {
        return undefined;
      }
    },
    { timeoutMs: 60_000, intervalMs: 250, message: 'every record in the warehouse' },
  );

  const letters = await deadLetters.list(100);
  expect(letters).toHaveLength(7);
  expectNoRawValue(JSON.stringify(letters), 'the dead letters');
  expectNoRawValue(JSON.stringify(tables, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v)), 'the warehouse');
  expectNoRawValue(await dumpRedis(), 'Redis (delivered, dead letters)');

  // What was stored instead: joins still work on the hashes.
  const secret = (await api.runtime.store.get(api.tracker.id))!.privacySecret!;
  const user = letters.find((l) => l.record.kind === 'user')!.record;
  expect(user).toMatchObject({ uid: hmac(secret, EMAIL), properties: { email: masked, billing: { email: hmac(secret, EMAIL), country: 'FR' } }, context: { ip: '203.0.113.0' } });
  expect(user.properties).not.toHaveProperty('note');
  const session = letters.find((l) => l.record.kind === 'session')!.record;
  expect(session).toMatchObject({ uid: hmac(secret, EMAIL), properties: { client_ip: '198.51.100.0' } });
  const byEvent = new Map(letters.filter((l) => l.record.kind === 'event').map((l) => [l.record.event, l.record]));
  expect(byEvent.get('data')).toMatchObject({ uid: hmac(secret, EMAIL), properties: { contacts: [{ phone: hmac(secret, PHONE) }, { phone: hmac(secret, PHONE), kind: 'work' }] } });
  expect(byEvent.get('github.issues.opened')).toMatchObject({ properties: { action: 'opened', sender: { email: hmac(secret, EMAIL), login: 'ada' } } });
  expect(byEvent.get('github.issues.opened')!.properties).not.toHaveProperty('note');
  const uids = tables.users.rows.map((r) => r[tables.users.columns.indexOf('_uid')]);
  expect(uids).toEqual([hmac(secret, EMAIL)]);
});
