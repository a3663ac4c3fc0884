import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { queryWarehouse } from '../../connectors/local';
import { TrackerStore } from '../../src/core/trackers/store';
import { freePort } from '../helpers/redis-server';
import { spawnTributary, waitReady, type TributaryProcess } from '../helpers/tributary-process';
import { waitFor } from '../helpers/wait';

/**
 * The README's quick start, as a newcomer runs it: no REDIS_URL, an empty data directory. The
 * server must start its own Redis, create the demo tracker with a local destination, accept all
 * three resources and land them in the warehouse, then stop cleanly on SIGTERM.
 */
let dataDir: string;
let proc: TributaryProcess;
let port: number;

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'tributary-quickstart-'));
  port = await freePort();
  proc = spawnTributary('all', { DATA_DIR: dataDir, PORT: String(port), REDIS_URL: '', DELIVERY_DISCOVER_INTERVAL_MS: '100' });
  await waitReady(port, proc);
});
afterAll(async () => {
  await proc.stop('SIGKILL');
  // If the test failed before its clean stop, the embedded redis-server outlived the killed server: stop it too.
  try {
    const leftover = new Redis(readFileSync(path.join(dataDir, 'redis', 'url'), 'utf8').trim(), { maxRetriesPerRequest: 0, retryStrategy: () => null });
    leftover.on('error', () => undefined);
    await leftover.shutdown('NOSAVE').catch(() => undefined);
    leftover.disconnect();
  } catch {
    // stopped cleanly: no url file left
  }
  rmSync(dataDir, { recursive: true, force: true });
});

test('first start: embedded Redis, demo tracker, records delivered to the local warehouse, clean stop', async () => {
  expect(proc.output()).toContain('First start: created tracker "demo"');
  const redisUrl = readFileSync(path.join(dataDir, 'redis', 'url'), 'utf8').trim();
  const redis = new Redis(redisUrl);
  const demo = await new TrackerStore(redis, 'tributary').get('demo');
  redis.disconnect();
  expect(demo?.destinations.map((d) => d.type)).toEqual(['local']);
  const token = demo!.tokens[0]!.token;
  expect(proc.output()).toContain(token);

  const base = `http://127.0.0.1:${port}`;
  // The console: the admin token printed once, and kept in DATA_DIR, signs in.
  const adminToken = readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim();
  expect(proc.output()).toContain(adminToken);
  const page = await fetch(`${base}/admin/`);
  expect(page.status).toBe(200);
  expect(await page.text()).toContain('/admin/assets/main.js');
  const login = await fetch(`${base}/admin/api/session`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ token: adminToken }) });
  expect(login.status).toBe(204);
  expect(login.headers.get('set-cookie')).toMatch(/^tributary_session=/);

  const post = (p: string, body: unknown) => fetch(`${base}${p}`, { method: 'POST', headers: { Authorization: `Tracker ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  expect((await post('/v3/user', { _uid: 'u1', plan: 'free', seats: 3 })).status).toBe(202);
  expect((await post('/v3/user', { _uid: 'u1', plan: 'pro', seats: null })).status).toBe(202);
  expect((await post('/v3/session', { _sid: 's1', _uid: 'u1', source: 'ads' })).status).toBe(202);
  expect((await post('/v3/event', { _event: 'signup', _uid: 'u1', _sid: 's1', value: 42 })).status).toBe(202);
  expect((await fetch(`${base}/v3/event/tracker.gif?_token=${token}&_event=view`)).headers.get('content-type')).toBe('image/gif');

  const file = path.join(dataDir, 'warehouse', 'demo.duckdb');
  const events = await waitFor(
    async () => {
      try {
        const r = await queryWarehouse(file, 'select _event, _uid, _sid, value from events order by _event');
        return r.rows.length === 2 ? r : undefined;
      } catch {
        return undefined;
      }
    },
    { timeoutMs: 20_000, intervalMs: 200, message: 'two events in the warehouse' },
  );
  expect(events.rows).toEqual([
    ['signup', 'u1', 's1', '42'],
    ['view', null, null, null],
  ]);
  const users = await waitFor(async () => {
    const r = await queryWarehouse(file, "select _uid, plan, _properties->>'seats' from users");
    return r.rows.length === 1 && r.rows[0]![1] === 'pro' ? r : undefined;
  });
  expect(users.rows).toEqual([['u1', 'pro', null]]);
  const sessions = await queryWarehouse(file, 'select _sid, _uid, source from sessions');
  expect(sessions.rows).toEqual([['s1', 'u1', 'ads']]);

  expect(await proc.stop('SIGTERM')).toBe(0);
  expect(() => readFileSync(path.join(dataDir, 'redis', 'url'))).toThrow();
});
