import { RetryableError } from '../../../connectors/errors';
import { startBigQueryFake } from '../../fakes/bigquery';
import { event, json, openWriter, PROJECT, readerClient, statuses, useWriterPerTest, writeUntilSettled } from './helpers';

// The client's transport on Node's fetch under jest: see test/fakes/bigquery/jest-transport.ts.
jest.mock('teeny-request', () => jest.requireActual<typeof import('../../fakes/bigquery/jest-transport')>('../../fakes/bigquery/jest-transport').teenyRequestOnNativeFetch());

/** Events through the connector, the real client and the fake; rows read back with queries. */
const bq = useWriterPerTest();

const count = async () => Number((await bq.fx.query('SELECT COUNT(*) AS n FROM `@@.events`'))[0]!.n);

it('appends events with reserved columns, _properties and a typed column per property', async () => {
  const e = event('signup', { plan: 'pro', seats: 3, ratio: 0.5, trial: false, tags: ['a', 'b'] }, { uid: 'u1', sid: 's1', context: { ip: '198.51.100.7' } });
  expect(statuses(await bq.fx.write([e]))).toEqual(['ok']);
  const [row] = await bq.fx.query('SELECT * FROM `@@.events`');
  expect(row).toMatchObject({ _id: e.id, _uid: 'u1', _sid: 's1', _event: 'signup', plan: 'pro', seats: 3, ratio: 0.5, trial: false });
  expect((row!._event_at as { value: string }).value).toBe(e.eventAt);
  expect(json(row!.tags)).toEqual(['a', 'b']);
  expect(json(row!._context)).toEqual({ ip: '198.51.100.7' });
  expect(json(row!._properties)).toEqual({ plan: 'pro', seats: 3, ratio: 0.5, trial: false, tags: ['a', 'b'] });
  const table = bq.fake.table(PROJECT, bq.fx.dataset, 'events')!;
  expect(table.timePartitioning).toEqual({ type: 'DAY', field: '_event_at' });
  expect(table.clustering).toEqual({ fields: ['_event', '_uid'] });
});

it('follows the data: a new property becomes a column on the next batch, with one tables.patch', async () => {
  await bq.fx.write([event('view', { page: '/' })]);
  await bq.fx.write([event('view', { page: '/a', referrer: 'ads' }), event('view', { 'utm source': 'mail' })]);
  expect(bq.fake.calls['tables.patch']).toBe(2);
  const rows = await bq.fx.query('SELECT page, referrer, utm_source FROM `@@.events` ORDER BY _id');
  expect(rows).toEqual([
    { page: '/', referrer: null, utm_source: null },
    { page: '/a', referrer: 'ads', utm_source: null },
    { page: null, referrer: null, utm_source: 'mail' },
  ]);
});

it('never drops a value of another type: the column stays NULL, _properties has it; a fraction widens INT64 instead', async () => {
  await bq.fx.write([event('e', { n: 1, price: 2.5 })]);
  await bq.fx.write([event('e', { n: 'many', price: 3 }), event('e', { n: 1.5 })]);
  const rows = await bq.fx.query("SELECT n, price, JSON_QUERY(_properties, '$.n') AS raw FROM `@@.events` ORDER BY _id");
  expect(rows).toEqual([
    { n: 1, price: 2.5, raw: '1' },
    { n: null, price: 3, raw: '"many"' },
    { n: 1.5, price: null, raw: '1.5' },
  ]);
});

it('sends at most 500 rows per insertAll: 1 200 events in 3 calls', async () => {
  const events = Array.from({ length: 1200 }, (_, i) => event('bulk', { i }));
  expect(new Set(statuses(await bq.fx.write(events)))).toEqual(new Set(['ok']));
  expect(bq.fake.calls['tabledata.insertAll']).toBe(3);
  expect(await count()).toBe(1200);
});

it('keeps each request under 10 MB: large events are split by size', async () => {
  const events = Array.from({ length: 12 }, (_, i) => event('big', { i, blob: 'x'.repeat(1024 * 1024) }));
  expect(new Set(statuses(await bq.fx.write(events)))).toEqual(new Set(['ok']));
  expect(bq.fake.calls['tabledata.insertAll']).toBeGreaterThanOrEqual(2);
  expect(await count()).toBe(12);
});

it('fails an invalid row with BigQuery’s message and answers retry for the rows it stopped, which then land', async () => {
  const good = [event('ok', { a: 1 }), event('ok', { a: 2 })];
  const bad = event('bad', {}, { eventAt: 'yesterday' });
  const outcomes = await bq.fx.write([good[0]!, bad, good[1]!]);
  expect(statuses(outcomes)).toEqual(['retry', 'failed', 'retry']);
  expect(outcomes[1]).toMatchObject({ error: { kind: 'permanent', message: expect.stringMatching(/^BigQuery refused this row: _event_at: Couldn't convert value to timestamp/) } });
  expect(statuses(await bq.fx.write(good))).toEqual(['ok', 'ok']);
  expect(await count()).toBe(2);
});

it('retries rows refused because a new column has not reached streaming yet', async () => {
  const lagging = await startBigQueryFake({ schemaPropagationMs: 200 });
  const lfx = await openWriter(lagging);
  try {
    const outcomes = await lfx.write([event('e', { fresh: 1 }), event('e', {})]);
    expect(statuses(outcomes)).toEqual(['retry', 'retry']);
    expect(outcomes[0]).toMatchObject({ error: { kind: 'retryable', details: { reason: 'schemaPropagation' } } });
    await new Promise((r) => setTimeout(r, 250));
    const settled = await writeUntilSettled(lfx, [event('e', { fresh: 2 })]);
    expect([...settled.values()].map((o) => o.status)).toEqual(['ok']);
  } finally {
    await lfx.close();
    await lagging.close();
  }
});

it('writes each event once when an answer is lost after the rows landed: the retry finds them and sends nothing', async () => {
  bq.fake.faults.inject('tabledata.insertAll', { kind: 'lose-response' });
  const events = Array.from({ length: 10 }, (_, i) => event('lost', { i }));
  await expect(bq.fx.write(events)).rejects.toBeInstanceOf(RetryableError);
  expect(bq.fake.calls['jobs.query']).toBeUndefined();
  expect(statuses(await bq.fx.write(events))).toEqual(Array(10).fill('ok'));
  expect(await count()).toBe(10);
  expect(bq.fake.calls['tabledata.insertAll']).toBe(1);
  expect(bq.fake.stats.rowsDeduplicated).toBe(0);
});

it('after a partial failure, re-sends only what did not land, even without BigQuery’s deduplication', async () => {
  const noDedup = await startBigQueryFake({ dedupWindowMs: 0 });
  const nfx = await openWriter(noDedup);
  try {
    const events = Array.from({ length: 1000 }, (_, i) => event('half', { i }));
    noDedup.faults.backendError('tabledata.insertAll', 1, (c) => (c.body.rows as unknown[]).length === 500 && noDedup.calls['tabledata.insertAll'] === 2);
    await expect(nfx.write(events)).rejects.toMatchObject({ kind: 'retryable', details: { status: 503 } });
    expect(statuses(await nfx.write(events))).toEqual(Array(1000).fill('ok'));
    expect(noDedup.calls['tabledata.insertAll']).toBe(3);
    expect(Number((await nfx.query('SELECT COUNT(*) AS n FROM `@@.events`'))[0]!.n)).toBe(1000);
  } finally {
    await nfx.close();
    await noDedup.close();
  }
});

it('rides out a storm of 5xx and quota errors without losing or doubling a row', async () => {
  bq.fake.faults.backendError('tabledata.insertAll', 3).rateLimit('tabledata.insertAll', 2);
  const events = Array.from({ length: 700 }, (_, i) => event('storm', { i }));
  const settled = await writeUntilSettled(bq.fx, events);
  expect([...settled.values()].every((o) => o.status === 'ok')).toBe(true);
  expect(await count()).toBe(700);
});

it('gives up on a call after requestTimeoutMs; the late write is not doubled by the retry', async () => {
  const tfx = await openWriter(bq.fake, { requestTimeoutMs: 500 });
  try {
    await tfx.write([event('warm', {})]);
    bq.fake.faults.inject('tabledata.insertAll', { kind: 'delay', ms: 1500 });
    const e = event('slow', {});
    await expect(tfx.write([e])).rejects.toMatchObject({ kind: 'retryable', details: { reason: 'timeout' } });
    await new Promise((r) => setTimeout(r, 1600));
    // The retry, retried as the delivery loop would while a loaded machine keeps the fake slower than the timeout.
    let retried: Awaited<ReturnType<typeof tfx.write>> | undefined;
    for (let attempt = 0; attempt < 5 && !retried; attempt++) {
      retried = await tfx.write([e]).catch((err: { kind?: string; details?: { reason?: string } }) => {
        if (err.kind === 'retryable' && err.details?.reason === 'timeout') return undefined;
        throw err;
      });
    }
    expect(statuses(retried!)).toEqual(['ok']);
    expect(Number((await tfx.query("SELECT COUNT(*) AS n FROM `@@.events` WHERE _event = 'slow'"))[0]!.n)).toBe(1);
  } finally {
    await tfx.close();
  }
});

it('recreates a deleted events table on the retry', async () => {
  await bq.fx.write([event('before', {})]);
  await readerClient(bq.fake).dataset(bq.fx.dataset).table('events').delete();
  await expect(bq.fx.write([event('gone', {})])).rejects.toMatchObject({ kind: 'retryable', details: { status: 404 } });
  const e = event('after', { fresh: true });
  expect(statuses(await bq.fx.write([e]))).toEqual(['ok']);
  expect(await bq.fx.query('SELECT _event, fresh FROM `@@.events`')).toEqual([{ _event: 'after', fresh: true }]);
});
