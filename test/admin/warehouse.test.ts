import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { localConnector } from '../../connectors/local';
import { createLogger } from '../../src/core/logger';
import type { TrackedRecord } from '../../src/core/records/types';
import { eventRecord } from '../cli/seed';
import { adminClient, startAdminApi, type AdminTestApi } from '../helpers/admin-api';

let api: AdminTestApi;
let client: ReturnType<typeof adminClient>;

const ada: TrackedRecord = { kind: 'user', id: '0190c000-0000-7000-8000-0000000000aa', receivedAt: '2024-01-01T00:00:00.000Z', uid: 'ada', properties: { plan: 'pro', visits: 3 } };
const events = [eventRecord(1), eventRecord(2, { event: 'signup', properties: { n: 2, big: 1099511627776 } }), eventRecord(3)];

/** Delivers records the way a worker does, through the connector, then lets go of the file. */
async function deliver(trackerId: string, destinationId: string, records: TrackedRecord[]): Promise<void> {
  const writer = await localConnector.open({ trackerId, destinationId, settings: {}, dataDir: api.dataDir, logger: createLogger('silent'), now: () => new Date() });
  try {
    const outcomes = await writer.write(records, AbortSignal.timeout(20_000));
    expect(outcomes.every((o) => o.status === 'ok')).toBe(true);
  } finally {
    await writer.close();
  }
}

const query = (trackerId: string, body: object) => client.post(`/trackers/${trackerId}/query`, body);

beforeAll(async () => {
  api = await startAdminApi();
  client = adminClient(api);
  await api.addTracker({ id: 'shop' });
  await client.post('/trackers/shop/destinations', { type: 'local', id: 'wh', settings: {} }).expect(201);
  await deliver('shop', 'wh', [ada, ...events]);
});
afterAll(async () => api.close());

test('answers columns and rows, 64-bit integers as exact strings', async () => {
  const res = await query('shop', { sql: 'select _event, count(*) as n, max(big) as big from events group by 1 order by 1' });
  expect(res.status).toBe(200);
  expect(res.body).toEqual({
    columns: ['_event', 'n', 'big'],
    rows: [
      ['purchase', '2', null],
      ['signup', '1', '1099511627776'],
    ],
    truncated: false,
  });
  const users = await query('shop', { sql: 'select _uid, plan, visits from users' });
  expect(users.body).toMatchObject({ columns: ['_uid', 'plan', 'visits'], rows: [['ada', 'pro', '3']] });
});

test('the local destination can be named; a wrong name or type is refused', async () => {
  const named = await query('shop', { sql: 'select count(*) as n from events', destination: 'wh' });
  expect(named.status).toBe(200);
  expect(named.body.rows).toEqual([['3']]);
  const missing = await query('shop', { sql: 'select 1', destination: 'nope' });
  expect(missing.status).toBe(404);
  expect(missing.body.error.code).toBe('ERR_ADMIN_NOT_FOUND');
  await client.post('/trackers/shop/destinations', { type: 'memory', id: 'mem', settings: { name: 'wh-mem' } }).expect(201);
  const notLocal = await query('shop', { sql: 'select 1', destination: 'mem' });
  expect(notLocal.status).toBe(400);
  expect(notLocal.body.error).toMatchObject({ code: 'ERR_ADMIN_INVALID', message: expect.stringContaining('not local') });
});

test("bad SQL is a 400 with DuckDB's message, pointer line included", async () => {
  const res = await query('shop', { sql: 'selec 1' });
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe('ERR_ADMIN_INVALID');
  expect(res.body.error.message).toMatch(/^Parser Error: syntax error at or near "selec"/);
  expect(res.body.error.message).toContain('LINE 1: selec 1');
  const table = await query('shop', { sql: 'select * from nope' });
  expect(table.status).toBe(400);
  expect(table.body.error.message).toMatch(/Table with name nope does not exist/);
});

test('statements that write are refused, and the data stays', async () => {
  for (const sql of ['delete from events', 'create table x as select 1', "update users set plan = 'free'"]) {
    const res = await query('shop', { sql });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('ERR_ADMIN_INVALID');
    expect(res.body.error.message).toMatch(/read-only/i);
  }
  expect((await query('shop', { sql: 'select count(*) from events' })).body.rows).toEqual([['3']]);
  expect((await query('shop', { sql: 'select plan from users' })).body.rows).toEqual([['pro']]);
});

test('a statement cannot write or read files on the server', async () => {
  const target = path.join(api.dataDir, 'copied.csv');
  const res = await query('shop', { sql: `copy (select * from events) to '${target}' (format csv)` });
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe('ERR_ADMIN_INVALID');
  expect(existsSync(target)).toBe(false);
  const secret = path.join(api.dataDir, 'secret.txt');
  await writeFile(secret, 'not for the console');
  const read = await query('shop', { sql: `select content from read_text('${secret}')` });
  expect(read.status).toBe(400);
  expect(JSON.stringify(read.body)).not.toContain('not for the console');
});

test('more than 1000 rows: the first 1000, the full count, truncated', async () => {
  const res = await query('shop', { sql: 'select * from range(1500)' });
  expect(res.status).toBe(200);
  expect(res.body.truncated).toBe(true);
  expect(res.body.rows).toHaveLength(1000);
  expect(res.body.rows[0]).toEqual(['0']);
  expect(res.body.rows[999]).toEqual(['999']);
  const exact = await query('shop', { sql: 'select * from range(1000)' });
  expect(exact.body).toMatchObject({ truncated: false });
  expect(exact.body.rows).toHaveLength(1000);
});

test('an empty or missing sql is refused by name; unknown keys too', async () => {
  for (const body of [{ sql: '' }, { sql: '   ' }, {}]) {
    const res = await query('shop', body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'ERR_ADMIN_INVALID', field: 'sql' });
  }
  const extra = await query('shop', { sql: 'select 1', limit: 5 });
  expect(extra.status).toBe(400);
  expect(extra.body.error).toMatchObject({ code: 'ERR_ADMIN_INVALID', field: 'limit' });
});

test('a tracker without a local destination, or an unknown tracker: 404', async () => {
  await api.addTracker({ id: 'no-local' });
  const none = await query('no-local', { sql: 'select 1' });
  expect(none.status).toBe(404);
  expect(none.body.error).toMatchObject({ code: 'ERR_ADMIN_NOT_FOUND', message: 'Tracker no-local has no local destination.' });
  const unknown = await query('nope', { sql: 'select 1' });
  expect(unknown.status).toBe(404);
  expect(unknown.body.error.code).toBe('ERR_ADMIN_NOT_FOUND');
});

test('several local destinations need a name: 409', async () => {
  await api.addTracker({ id: 'two-local' });
  await client.post('/trackers/two-local/destinations', { type: 'local', id: 'a', settings: { path: 'two-a.duckdb' } }).expect(201);
  await client.post('/trackers/two-local/destinations', { type: 'local', id: 'b', settings: { path: 'two-b.duckdb' } }).expect(201);
  const res = await query('two-local', { sql: 'select 1' });
  expect(res.status).toBe(409);
  expect(res.body.error).toMatchObject({ code: 'ERR_ADMIN_CONFLICT', message: expect.stringContaining('several local destinations (a, b)') });
});

test('a local destination that received nothing yet says so', async () => {
  await api.addTracker({ id: 'fresh' });
  await client.post('/trackers/fresh/destinations', { type: 'local', settings: {} }).expect(201);
  const res = await query('fresh', { sql: 'select 1' });
  expect(res.status).toBe(404);
  expect(res.body.error.message).toContain('nothing has been delivered to it yet');
});

test('needs the admin token', async () => {
  const res = await api.http.post('/admin/api/trackers/shop/query').send({ sql: 'select 1' });
  expect(res.status).toBe(401);
});
