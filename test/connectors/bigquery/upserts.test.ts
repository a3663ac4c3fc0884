import { startBigQueryFake } from '../../fakes/bigquery';
import { event, json, openWriter, PROJECT, session, statuses, useWriterPerTest, user, writeUntilSettled } from './helpers';

// The client's transport on Node's fetch under jest: see test/fakes/bigquery/jest-transport.ts.
jest.mock('teeny-request', () => jest.requireActual<typeof import('../../fakes/bigquery/jest-transport')>('../../fakes/bigquery/jest-transport').teenyRequestOnNativeFetch());

/** Users and sessions: merged by key with MERGE statements the fake executes; rows read back. */
const bq = useWriterPerTest();

const one = async (table: 'users' | 'sessions', key: string) => {
  const rows = await bq.fx.query(`SELECT * FROM \`@@.${table}\` WHERE ${table === 'users' ? '_uid' : '_sid'} = '${key}'`);
  expect(rows).toHaveLength(1);
  return rows[0]!;
};
const merges = (table: string) => bq.fake.stats.dmlByTable[`${PROJECT}:${bq.fx.dataset}.${table}`] ?? 0;

it('merges across batches: supplied properties change, null clears, the rest are kept', async () => {
  expect(statuses(await bq.fx.write([user('u1', { plan: 'free', age: 30, city: 'Oslo' })]))).toEqual(['ok']);
  expect(statuses(await bq.fx.write([user('u1', { plan: 'pro', age: null })]))).toEqual(['ok']);
  const row = await one('users', 'u1');
  expect(row).toMatchObject({ plan: 'pro', age: null, city: 'Oslo' });
  expect(json(row._properties)).toEqual({ plan: 'pro', city: 'Oslo' });
});

it('folds updates to one key in batch order into one MERGE per table per flush', async () => {
  const outcomes = await bq.fx.write([user('u1', { x: 1 }), user('u1', { x: 2, y: 'a' }), user('u1', { x: null }), user('u1', { x: 3 }), user('u2', { x: 9 }), user('u2', { x: null }), session('s1', { step: 1 }), session('s1', { step: 2 })]);
  expect(new Set(statuses(outcomes))).toEqual(new Set(['ok']));
  expect(merges('users')).toBe(1);
  expect(merges('sessions')).toBe(1);
  expect(await one('users', 'u1')).toMatchObject({ x: 3, y: 'a' });
  expect(json((await one('users', 'u2'))._properties)).toEqual({});
  expect((await one('users', 'u2')).x).toBeNull();
  expect((await one('sessions', 's1')).step).toBe(2);
});

it('stores the latest update’s id and time, and keeps _context and a session’s _uid when an update has none', async () => {
  const first = user('u1', { a: 1 }, { ip: '198.51.100.1', userAgent: 'UA' });
  const latest = user('u1', { a: 2 });
  await bq.fx.write([first, latest]);
  await bq.fx.write([session('s1', { step: 1 }, 'u1')]);
  await bq.fx.write([session('s1', { step: 2 })]);
  const u = await one('users', 'u1');
  expect(u._id).toBe(latest.id);
  expect((u._received_at as { value: string }).value).toBe(latest.receivedAt);
  expect(json(u._context)).toEqual({ ip: '198.51.100.1', userAgent: 'UA' });
  expect(await one('sessions', 's1')).toMatchObject({ _uid: 'u1', step: 2 });
});

it('replaces a nested object whole and keeps the nulls inside it', async () => {
  await bq.fx.write([user('u1', { prefs: { theme: 'dark', lang: 'en' } })]);
  await bq.fx.write([user('u1', { prefs: { theme: null } })]);
  const row = await one('users', 'u1');
  expect(json(row.prefs)).toEqual({ theme: null });
  expect(json(row._properties)).toEqual({ prefs: { theme: null } });
});

it('keeps a value of another type in _properties and clears the typed column', async () => {
  await bq.fx.write([user('u1', { plan: 'pro' })]);
  await bq.fx.write([user('u1', { plan: 7, seats: 2 })]);
  const row = await one('users', 'u1');
  expect(row).toMatchObject({ plan: null, seats: 2 });
  expect(json(row._properties)).toEqual({ plan: 7, seats: 2 });
});

it('adds a column for a new property, named by the documented rules', async () => {
  await bq.fx.write([user('u1', { plan: 'a' })]);
  await bq.fx.write([user('u2', { Plan: 'b', 'last login': '2026-01-01', '2fa': true })]);
  expect(await one('users', 'u2')).toMatchObject({ Plan_fa8ed0bd: 'b', last_login: '2026-01-01', p_2fa: true, plan: null });
  const fields = bq.fake.table(PROJECT, bq.fx.dataset, 'users')!.fields;
  expect(fields.find((f) => f.name === 'last_login')).toEqual({ name: 'last_login', type: 'STRING', mode: 'NULLABLE', description: 'tributary property: last login' });
});

it('never streams into users or sessions (MERGE only: the fake refuses DML over streamed rows)', async () => {
  await bq.fx.write([user('u1', { a: 1 }), session('s1', { b: 1 }), event('e', {})]);
  await bq.fx.write([user('u1', { a: 2 }), session('s1', { b: 2 })]);
  expect(bq.fake.table(PROJECT, bq.fx.dataset, 'users')!.lastStreamedAt).toBeUndefined();
  expect(bq.fake.table(PROJECT, bq.fx.dataset, 'sessions')!.lastStreamedAt).toBeUndefined();
  expect(bq.fake.calls['tabledata.insertAll']).toBe(1);
});

it('re-applies the same state after a lost MERGE answer: one row, the right values', async () => {
  await bq.fx.write([user('u1', { n: 1, keep: 'yes' })]);
  bq.fake.faults.inject('jobs.query', { kind: 'lose-response' }, { when: (c) => String(c.body.query).startsWith('MERGE') });
  const batch = [user('u1', { n: 2 }), user('u1', { gone: 'x' }), user('u1', { gone: null })];
  await expect(bq.fx.write(batch)).rejects.toMatchObject({ kind: 'retryable' });
  expect(statuses(await bq.fx.write(batch))).toEqual(['ok', 'ok', 'ok']);
  const rows = await bq.fx.query('SELECT * FROM `@@.users`');
  expect(rows).toHaveLength(1);
  expect(json(rows[0]!._properties)).toEqual({ n: 2, keep: 'yes' });
});

it('retries DML conflicts and quota errors, and does not run a finished MERGE again when events failed', async () => {
  bq.fake.faults.inject('jobs.query', { kind: 'error', status: 400, reason: 'invalidQuery', message: `Could not serialize access to table ${PROJECT}:${bq.fx.dataset}.users due to concurrent update` }, { when: (c) => String(c.body.query).startsWith('MERGE') });
  await expect(bq.fx.write([user('u1', { a: 1 })])).rejects.toMatchObject({ kind: 'retryable', details: { reason: 'concurrentUpdate' } });
  bq.fake.faults.backendError('tabledata.insertAll', 2);
  const batch = [user('u1', { a: 2 }), session('s1', { b: 1 }), event('e', {})];
  const settled = await writeUntilSettled(bq.fx, batch);
  expect([...settled.values()].map((o) => o.status)).toEqual(['ok', 'ok', 'ok']);
  expect(merges('users')).toBe(1);
  expect(merges('sessions')).toBe(1);
  expect((await one('users', 'u1')).a).toBe(2);
});

it('runs one MERGE at a time per table across writers of this process', async () => {
  const slow = await startBigQueryFake({ dmlLatencyMs: 50 });
  const a = await openWriter(slow);
  const b = await openWriter(slow, { dataset: a.dataset });
  try {
    await a.write([user('u0', { n: 0 })]);
    const results = await Promise.all([a.write([user('u1', { n: 1 })]), b.write([user('u2', { n: 2 })]), a.write([user('u3', { n: 3 })])]);
    expect(results.flat().map((o) => o.status)).toEqual(['ok', 'ok', 'ok']);
    expect((await a.query('SELECT _uid FROM `@@.users` ORDER BY _uid')).map((r) => r._uid)).toEqual(['u0', 'u1', 'u2', 'u3']);
  } finally {
    await a.close();
    await b.close();
    await slow.close();
  }
});

it('waits for a query BigQuery answers before it completes (jobComplete: false)', async () => {
  await bq.fx.write([user('u1', { a: 1 })]);
  bq.fake.faults.inject('jobs.query', { kind: 'incomplete' }, { times: 2 });
  expect(statuses(await bq.fx.write([user('u1', { b: 2 })]))).toEqual(['ok']);
  expect(bq.fake.calls['jobs.getQueryResults']).toBe(2);
  expect(json((await one('users', 'u1'))._properties)).toEqual({ a: 1, b: 2 });
});

it('keeps the text {{projectId}} in data: the client library would replace it in request bodies', async () => {
  await bq.fx.write([user('u1', { note: 'see {{projectId}}' }), event('e', { note: '{{projectId}}' })]);
  expect((await one('users', 'u1')).note).toBe('see {{projectId}}');
  expect((await bq.fx.query('SELECT note FROM `@@.events`'))[0]).toEqual({ note: '{{projectId}}' });
});

it('recreates a deleted dataset and writes again', async () => {
  await bq.fx.write([user('u1', { a: 1 })]);
  const { readerClient } = jest.requireActual<typeof import('./helpers')>('./helpers');
  await readerClient(bq.fake).dataset(bq.fx.dataset).delete({ force: true });
  await expect(bq.fx.write([user('u1', { a: 2 })])).rejects.toMatchObject({ kind: 'retryable', details: { status: 404 } });
  const settled = await writeUntilSettled(bq.fx, [user('u1', { b: 3 })]);
  expect([...settled.values()].map((o) => o.status)).toEqual(['ok']);
  expect(json((await one('users', 'u1'))._properties)).toEqual({ b: 3 });
});
