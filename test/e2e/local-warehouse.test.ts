import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { localConnector, queryWarehouse } from '../../connectors/local';
import { ConnectorRegistry } from '../../connectors/registry';
import { DestinationStatusStore } from '../../jobs/delivery/destination-status';
import { deliveryKeys } from '../../jobs/delivery/keys';
import type { Connector } from '../../connectors/types';
import { startWorkerRuntime, type WorkerRuntime } from '../../jobs/worker-runtime';
import { createLogger } from '../../src/core/logger';
import { startTestApi, type TestApi } from '../helpers/api';
import { TEST_REDIS_URL } from '../helpers/redis';
import { waitFor } from '../helpers/wait';

/** HTTP in, local warehouse out, in one process: types that change, sessions that merge. */
const dataDir = mkdtempSync(path.join(tmpdir(), 'tributary-local-e2e-'));
let api: TestApi;
let worker: WorkerRuntime;

beforeAll(async () => {
  api = await startTestApi({ DATA_DIR: dataDir }, { destinations: [{ id: 'wh', type: 'local', enabled: true, settings: {} }] });
  worker = await startWorkerRuntime(api.config, TEST_REDIS_URL, new ConnectorRegistry([localConnector as Connector]), createLogger('silent'), { discoverIntervalMs: 50, delivery: { backoff: { baseMs: 50, maxMs: 200 }, maxRecordAttempts: 10, configRecheckMs: 200, pollMs: 100, writeTimeoutMs: 30_000 } });
});
afterAll(async () => {
  await worker.close();
  await api.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const post = (p: string, body: unknown) => api.http.post(p).set('Authorization', `Tracker ${api.token}`).send(body as object);
const file = () => path.join(dataDir, 'warehouse', `${api.tracker.id}.duckdb`);
const query = (sql: string) => queryWarehouse(file(), sql);

test('a property whose type changes keeps every value: widened, or kept in _properties', async () => {
  for (const amount of [5, 5.5, 'n/a']) expect((await post('/v3/event', { _event: 'pay', amount })).status).toBe(202);
  const rows = await waitFor(async () => {
    try {
      const r = await query("select amount, _properties->>'amount' from events where _event = 'pay' order by _id");
      return r.rows.length === 3 ? r.rows : undefined;
    } catch {
      return undefined;
    }
  }, { timeoutMs: 20_000 });
  expect(rows).toEqual([
    [5, '5'],
    [5.5, '5.5'],
    [null, 'n/a'],
  ]);
});

test('text beyond ASCII arrives as sent, in columns and in _properties (the router moves bytes, not strings)', async () => {
  const texts = ['Tributary — relay', 'Zürich, São Paulo', '数据仓库', '👩🏽‍💻 ok', 'tab\tquote" and \\'];
  const res = await post('/v3/event', texts.map((title, i) => ({ _event: 'unicode', title, n: i })));
  expect(res.status).toBe(202);
  const rows = await waitFor(async () => {
    try {
      const r = await query("select title, _properties->>'title' from events where _event = 'unicode' order by n");
      return r.rows.length === texts.length ? r.rows : undefined;
    } catch {
      return undefined;
    }
  }, { timeoutMs: 20_000 });
  expect(rows).toEqual(texts.map((t) => [t, t]));
});

test('session updates merge: supplied properties change, others are kept, null clears', async () => {
  expect((await post('/v3/session', { _sid: 's1', _uid: 'u1', source: 'ads', device: 'mobile' })).status).toBe(202);
  expect((await post('/v3/session', { _sid: 's1', landing: '/pricing', device: null })).status).toBe(202);
  const rows = await waitFor(async () => {
    try {
      // `device` may never become a column: both updates can land in one batch, and null creates no column.
      const r = await query("select _sid, _uid, source, landing, _properties->>'device' from sessions");
      return r.rows.length === 1 && r.rows[0]![3] === '/pricing' ? r.rows : undefined;
    } catch {
      return undefined;
    }
  }, { timeoutMs: 20_000 });
  expect(rows).toEqual([['s1', 'u1', 'ads', '/pricing', null]]);
});

test('a warehouse held by another process: the batch is retried, then delivered once, nothing lost', async () => {
  mkdirSync(path.dirname(file()), { recursive: true });
  // Wait until the worker has let go of the file (it closes it when idle), then take it.
  const script = `const f=${JSON.stringify(file())};const {DuckDBInstance}=require('@duckdb/node-api');(function grab(){DuckDBInstance.create(f).then(()=>{process.stdout.write('ready\\n');setInterval(()=>{},1000)},()=>setTimeout(grab,50))})();`;
  const holder = spawn(process.execPath, ['-e', script], { cwd: path.join(__dirname, '..', '..') });
  await new Promise<void>((resolve) => holder.stdout.once('data', () => resolve()));
  const res = await post('/v3/event', { _event: 'while-locked' });
  expect(res.status).toBe(202);
  const status = new DestinationStatusStore(api.runtime.redis, deliveryKeys(api.prefix, { trackerId: api.tracker.id, destinationId: 'wh' }));
  await waitFor(async () => (await status.read()).lastError?.message.includes('another process'), { timeoutMs: 20_000, message: 'a retryable lock error' });
  const exited = new Promise((r) => holder.once('exit', r));
  holder.kill('SIGTERM');
  await exited;
  const rows = await waitFor(async () => {
    try {
      const r = await query(`select count(*)::int from events where _id = '${res.body.id}'`);
      return r.rows[0]![0] === 1 ? r.rows : undefined;
    } catch {
      return undefined;
    }
  }, { timeoutMs: 20_000 });
  expect(rows).toEqual([[1]]);
  expect((await status.read()).deadLettered).toBe(0);
});
