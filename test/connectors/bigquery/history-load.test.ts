import { randomUUID } from 'node:crypto';
import { BigQueryApi } from '../../../connectors/bigquery/client';
import { resolveSettings } from '../../../connectors/bigquery/config';
import { loadEvents } from '../../../connectors/bigquery/load-events';
import { SchemaCache } from '../../../connectors/bigquery/schema';
import { createLogger } from '../../../src/core/logger';
import { bigIntsAsStrings, parseExactJson } from '../../../src/core/records/exact-json';
import type { JsonValue, TrackedRecord } from '../../../src/core/records/types';
import { burstDeliveries } from '../../helpers/webhook-burst';
import { event, props, useWriterPerTest } from './helpers';

// The BigQuery client's transport on Node's fetch under jest: see test/fakes/bigquery/jest-transport.ts.
jest.mock('teeny-request', () => jest.requireActual<typeof import('../../fakes/bigquery/jest-transport')>('../../fakes/bigquery/jest-transport').teenyRequestOnNativeFetch());
jest.setTimeout(60_000);

/**
 * History into BigQuery by load jobs (connectors/bigquery/load-events.ts), against the fake with
 * the real client: a chunk is a stage table, one load, one statement; nothing is doubled whatever
 * fails between the steps, and rows BigQuery refuses are settled one by one as live rows are.
 */
const bq = useWriterPerTest();
const history = { resend: true, history: true };
const write = (records: TrackedRecord[]) => bq.fx.writer.write(records, new AbortController().signal, history);

/** `n` events of `n` distinct ids, with a JSON property, a big integer and a float. */
const chunk = (n: number, label = 'h') =>
  Array.from({ length: n }, (_, i) => event(`${label}_event`, props({ n: i, big: BigInt('9007199254740993') + BigInt(i), nested: { a: [i, 'x'] }, price: i + 0.5 })));

async function counts(): Promise<{ rows: number; ids: number }> {
  const [row] = await bq.fx.query('SELECT count(*) AS rows, count(DISTINCT _id) AS ids FROM `@@.events`');
  return { rows: Number(row!.rows), ids: Number(row!.ids) };
}

test('a chunk is one stage table, one load job and one statement, and arrives whole, exact and typed', async () => {
  const records = chunk(3000);
  const outcomes = await write(records);
  expect(outcomes.every((o) => o.status === 'ok')).toBe(true);
  const calls = { ...bq.fake.calls };
  expect(await counts()).toEqual({ rows: 3000, ids: 3000 });
  expect(calls['tabledata.insertAll'] ?? 0).toBe(0);
  expect(calls['jobs.insert']).toBe(1);
  expect(calls['jobs.query']).toBe(1);
  expect(calls['jobs.get']).toBeGreaterThanOrEqual(1);
  // The stage is gone, dropped by the statement's script.
  expect(Object.keys(calls)).not.toContain('tables.delete');
  expect(bq.fake.stats.loadJobs).toBe(1);
  expect(bq.fake.stats.statements).toMatchObject({ SCRIPT: 1, INSERT: 1, DROP_TABLE: 1 });
  expect(bq.fake.table('tributary-test', bq.fx.dataset, 'events')).toBeDefined();
  const [row] = await bq.fx.query("SELECT CAST(big AS STRING) AS big, TO_JSON_STRING(nested) AS nested, price, JSON_VALUE(_properties, '$.big') AS pbig FROM `@@.events` WHERE n = 7");
  expect(row).toEqual({ big: '9007199254741000', nested: '{"a":[7,"x"]}', price: 7.5, pbig: '9007199254741000' });
});

test('a chunk written again, or past the insertId window, or a second backfill: nothing doubled', async () => {
  const records = chunk(2000);
  await write(records);
  await write(records);
  await write([...records.slice(500), ...chunk(1000, 'more')]);
  expect(await counts()).toEqual({ rows: 3000, ids: 3000 });
});

test('a load whose answer is lost, and a statement whose answer is lost: retried, stored once', async () => {
  const records = chunk(1500);
  bq.fake.faults.inject('jobs.insert', { kind: 'lose-response' });
  await expect(write(records)).rejects.toMatchObject({ kind: 'retryable' });
  bq.fake.faults.inject('jobs.query', { kind: 'lose-response' }, { when: (c) => String(c.body.query).startsWith('INSERT') });
  await expect(write(records)).rejects.toMatchObject({ kind: 'retryable' });
  // The statement ran: the next attempt inserts nothing more and drops the stage.
  expect(await counts()).toEqual({ rows: 1500, ids: 1500 });
  expect((await write(records)).every((o) => o.status === 'ok')).toBe(true);
  expect(await counts()).toEqual({ rows: 1500, ids: 1500 });
});

test('a worker that stops between the load and the statement: the next attempt loads the chunk again and appends it once', async () => {
  const records = chunk(1500);
  bq.fake.faults.backendError('jobs.query', 1, (c) => String(c.body.query).startsWith('INSERT'));
  await expect(write(records)).rejects.toMatchObject({ kind: 'retryable' });
  expect(await counts()).toEqual({ rows: 0, ids: 0 });
  expect((await write(records)).every((o) => o.status === 'ok')).toBe(true);
  expect(bq.fake.stats.loadJobs).toBe(2);
  expect(await counts()).toEqual({ rows: 1500, ids: 1500 });
});

test('a load BigQuery refuses for a value: the chunk goes the streaming way, the refused row dead-lettered, the others stored', async () => {
  const refused: TrackedRecord = event('h_event', props({ n: 1 }), { eventAt: 'not-a-time' as never });
  const records = chunk(1200);
  const batch = [...records.slice(0, 600), refused, ...records.slice(600)];
  const outcomes = await write(batch);
  expect(bq.fake.stats.loadJobs).toBe(1);
  expect(outcomes[600]).toMatchObject({ status: 'failed', error: { kind: 'permanent', message: expect.stringContaining('_event_at') } });
  expect(outcomes.filter((o) => o.status === 'failed')).toHaveLength(1);
  // The rows insertAll stopped beside the refused one are sent again, as the delivery loop does.
  const again = batch.filter((_, i) => outcomes[i]!.status === 'retry');
  expect((await write(again)).every((o) => o.status === 'ok')).toBe(true);
  expect(await counts()).toEqual({ rows: 1200, ids: 1200 });
});

test('a small history batch goes the streaming way, looked up first', async () => {
  await write(chunk(10));
  expect(bq.fake.calls['jobs.insert'] ?? 0).toBe(0);
  expect(bq.fake.calls['tabledata.insertAll']).toBe(1);
});

test('a chunk of real webhook payloads (about 240 columns, tens of KB each) goes as several loads within the load size, each appended once', async () => {
  const records = [0, 1].flatMap((copy) =>
    burstDeliveries(copy)
      .filter((d) => d.contentType === 'application/json' && !d.body.startsWith('['))
      .map((d) => event(`${d.source}_delivery`, parseExactJson(d.body) as Record<string, JsonValue>, { id: randomUUID() })),
  );
  const bytes = records.reduce((n, r) => n + JSON.stringify(bigIntsAsStrings(r.properties)).length, 0);
  const settings = resolveSettings(bq.fx.settings);
  const api = new BigQueryApi(settings);
  const deps = { api, schema: new SchemaCache(api, settings, createLogger('silent')), settings };
  const maxLoadBytes = 4 * 1024 * 1024;
  const { outcomes, error } = await loadEvents(deps, records, new AbortController().signal, maxLoadBytes);
  expect(error).toBeUndefined();
  expect([...outcomes.values()].every((o) => o.status === 'ok')).toBe(true);
  expect(outcomes.size).toBe(records.length);
  // The rows are at least their properties twice (the columns and _properties): more loads than that divides into.
  expect(bq.fake.stats.loadJobs).toBeGreaterThanOrEqual(Math.ceil((2 * bytes) / maxLoadBytes));
  expect(await counts()).toEqual({ rows: records.length, ids: records.length });
  // Written again (a retry after a lost answer): nothing more.
  await loadEvents(deps, records, new AbortController().signal, maxLoadBytes);
  expect(await counts()).toEqual({ rows: records.length, ids: records.length });
}, 120_000);
