import type { TrackedRecord } from '../../../src/core/records/types';
import { event, json, openWriter, PROJECT, statuses, uniqueDataset, user, type Fixture } from './helpers';
import { startBigQueryFake, type BigQueryFake } from '../../fakes/bigquery';

// The client's transport on Node's fetch under jest: see test/fakes/bigquery/jest-transport.ts.
jest.mock('teeny-request', () => jest.requireActual<typeof import('../../fakes/bigquery/jest-transport')>('../../fakes/bigquery/jest-transport').teenyRequestOnNativeFetch());

/** An INT64 column meeting a fraction becomes FLOAT64 (or BIGNUMERIC for a whole number beyond 64 bits). */
let fake: BigQueryFake;
let now = Date.UTC(2026, 10, 20, 12);
let fx: Fixture;
beforeAll(async () => {
  // Streaming sees a changed column's new type only after a while, as with Google.
  fake = await startBigQueryFake({ schemaPropagationMs: 60_000, now: () => now });
});
afterAll(() => fake.close());
beforeEach(async () => {
  fx = await openWriter(fake, { dataset: uniqueDataset() });
  fake.resetCounters();
  fake.faults.clear();
});
afterEach(() => fx.close());

/** Writes as the delivery loop would, letting a minute pass before re-sending rows BigQuery's streaming was not ready for (new or changed columns). */
async function settle(records: TrackedRecord[]): Promise<string[]> {
  const final = new Map<string, string>();
  let pending = records;
  for (let i = 0; i < 3 && pending.length > 0; i++) {
    const outcomes = await fx.write(pending);
    pending.forEach((r, j) => final.set(r.id, outcomes[j]!.status));
    pending = pending.filter((_, j) => outcomes[j]!.status === 'retry');
    now += 60_000;
  }
  return records.map((r) => final.get(r.id)!);
}

const typeOf = (table: string, column: string) => fake.table(PROJECT, fx.dataset, table)!.fields.find((f) => f.name === column)?.type;
const statements = () => fake.stats.sql.filter((s) => !/^SELECT _id/.test(s));

test('events: a fraction widens an INT64 column to FLOAT64 by DDL; stored integers stay readable', async () => {
  expect(await settle([event('order', { total: 41 }), event('order', { total: -7 })])).toEqual(['ok', 'ok']);
  expect(typeOf('events', 'total')).toBe('INTEGER');

  const fraction = event('order', { total: 42.5 });
  // Right after the change, streaming still checks the old type: the row is retried, not dead-lettered.
  const first = await fx.write([fraction]);
  expect(first[0]).toMatchObject({ status: 'retry', error: { details: { reason: 'schemaPropagation' } } });
  expect(typeOf('events', 'total')).toBe('FLOAT');
  expect(statements().filter((s) => s.startsWith('ALTER TABLE'))).toEqual([`ALTER TABLE \`${PROJECT}\`.\`${fx.dataset}\`.\`events\` ALTER COLUMN \`total\` SET DATA TYPE FLOAT64`]);
  expect(fake.calls['tables.patch'] ?? 0).toBe(1);

  now += 60_000;
  expect(statuses(await fx.write([fraction, event('order', { total: 8 })]))).toEqual(['ok', 'ok']);
  expect(await fx.query('SELECT total, JSON_VALUE(_properties, "$.total") AS raw FROM `@@.events` ORDER BY _id')).toEqual([
    { total: 41, raw: '41' },
    { total: -7, raw: '-7' },
    { total: 42.5, raw: '42.5' },
    { total: 8, raw: '8' },
  ]);
  // Once widened, nothing more is altered.
  expect(statements().filter((s) => s.startsWith('ALTER TABLE'))).toHaveLength(1);
});

test('a new property whose values disagree within a batch is created FLOAT64 at once', async () => {
  expect(await settle([event('view', { ratio: 1 }), event('view', { ratio: 0.25 })])).toEqual(['ok', 'ok']);
  expect(typeOf('events', 'ratio')).toBe('FLOAT');
  expect(statements().some((s) => s.startsWith('ALTER TABLE'))).toBe(false);
  expect((await fx.query('SELECT ratio FROM `@@.events` ORDER BY _id')).map((r) => r.ratio)).toEqual([1, 0.25]);
});

test('users: the MERGE writes the fraction once the column is widened; the stored integer is kept', async () => {
  expect(statuses(await fx.write([user('u1', { score: 3 }), user('u2', { score: 4 })]))).toEqual(['ok', 'ok']);
  expect(statuses(await fx.write([user('u1', { score: 3.5 })]))).toEqual(['ok']);
  expect(typeOf('users', 'score')).toBe('FLOAT');
  const rows = await fx.query('SELECT _uid, score, _properties FROM `@@.users` ORDER BY _uid');
  expect(rows.map((r) => ({ uid: r._uid, score: r.score, props: json(r._properties) }))).toEqual([
    { uid: 'u1', score: 3.5, props: { score: 3.5 } },
    { uid: 'u2', score: 4, props: { score: 4 } },
  ]);
});

test('a column holding a whole number beyond 2^53 stays INT64: the fraction is in _properties, the check runs once', async () => {
  now += 3_600_000;
  expect(await settle([event('order', { id: 603851970716743426n })])).toEqual(['ok']);
  expect(await settle([event('order', { id: 0.5 })])).toEqual(['ok']);
  expect(await settle([event('order', { id: 1.5 })])).toEqual(['ok']);
  expect(typeOf('events', 'id')).toBe('INTEGER');
  const checks = statements().filter((s) => s.startsWith('SELECT COUNTIF'));
  expect(checks).toEqual([`SELECT COUNTIF(\`id\` NOT BETWEEN -9007199254740991 AND 9007199254740991) AS u0 FROM \`${PROJECT}\`.\`${fx.dataset}\`.\`events\``]);
  expect(await fx.query('SELECT CAST(id AS STRING) AS id, JSON_VALUE(_properties, "$.id") AS raw FROM `@@.events` ORDER BY _id')).toEqual([
    { id: '603851970716743426', raw: '603851970716743426' },
    { id: null, raw: '0.5' },
    { id: null, raw: '1.5' },
  ]);
});

test('a whole number beyond 64 bits widens INT64 to BIGNUMERIC, keeping the stored integers exact', async () => {
  now += 3_600_000;
  expect(statuses(await fx.write([user('u1', { n: 9007199254740993n })]))).toEqual(['ok']);
  expect(statuses(await fx.write([user('u2', { n: 123456789012345678901234n })]))).toEqual(['ok']);
  expect(typeOf('users', 'n')).toBe('BIGNUMERIC');
  expect(await fx.query('SELECT _uid, CAST(n AS STRING) AS n FROM `@@.users` ORDER BY _uid')).toEqual([
    { _uid: 'u1', n: '9007199254740993' },
    { _uid: 'u2', n: '123456789012345678901234' },
  ]);
});

test('BigQuery refusing the ALTER: the column stays INT64, the batch is written, the fraction kept in _properties', async () => {
  now += 3_600_000;
  expect(await settle([event('order', { qty: 2 })])).toEqual(['ok']);
  let alters = 0;
  const refusal = { kind: 'error', status: 400, reason: 'invalidQuery', message: 'ALTER TABLE ALTER COLUMN SET DATA TYPE is not supported here' } as const;
  fake.faults.inject('jobs.query', refusal, { times: Infinity, when: (c) => String(c.body.query).startsWith('ALTER TABLE') && ++alters > 0 });
  expect(await settle([event('order', { qty: 2.5 })])).toEqual(['ok']);
  expect(typeOf('events', 'qty')).toBe('INTEGER');
  expect(await fx.query('SELECT qty, JSON_VALUE(_properties, "$.qty") AS raw FROM `@@.events` ORDER BY _id')).toEqual([
    { qty: 2, raw: '2' },
    { qty: null, raw: '2.5' },
  ]);
  // Not tried again by this writer.
  expect(await settle([event('order', { qty: 3.5 })])).toEqual(['ok']);
  expect(alters).toBe(1);
});

test('a transient failure of the ALTER retries the batch, which then widens and lands once', async () => {
  now += 3_600_000;
  expect(await settle([event('order', { price: 10 })])).toEqual(['ok']);
  fake.faults.backendError('jobs.query', 1, (c) => String(c.body.query).startsWith('ALTER TABLE'));
  const batch = [event('order', { price: 10.5 })];
  await expect(fx.write(batch)).rejects.toMatchObject({ kind: 'retryable' });
  expect(typeOf('events', 'price')).toBe('INTEGER');
  expect(await settle(batch)).toEqual(['ok']);
  expect((await fx.query('SELECT price FROM `@@.events` ORDER BY _id')).map((r) => r.price)).toEqual([10, 10.5]);
});
