import type { BigQuery } from '@google-cloud/bigquery';

// The client's transport on Node's fetch under jest: see jest-transport.ts.
jest.mock('teeny-request', () => jest.requireActual<typeof import('./jest-transport')>('./jest-transport').teenyRequestOnNativeFetch());
import { readerClient, uniqueDataset } from '../../connectors/bigquery/helpers';
import { startBigQueryFake, type BigQueryFake } from './';

/** A column's type changes only through DDL, and only by the widenings BigQuery lists. */
let fake: BigQueryFake;
let bq: BigQuery;
let now = Date.UTC(2026, 10, 20, 12);
let ds: string;
let n = 0;
beforeAll(async () => {
  fake = await startBigQueryFake({ schemaPropagationMs: 120_000, now: () => now });
  bq = readerClient(fake);
  ds = uniqueDataset();
  await bq.createDataset(ds);
});
afterAll(() => fake.close());

async function failure(p: Promise<unknown>): Promise<{ code: unknown; reason: unknown; message: string }> {
  try {
    await p;
  } catch (err) {
    const e = err as { code?: unknown; errors?: Array<{ reason?: unknown }>; message: string };
    return { code: e.code, reason: e.errors?.[0]?.reason, message: e.message };
  }
  throw new Error('expected the call to fail');
}

const fields = [
  { name: '_id', type: 'STRING', mode: 'REQUIRED' },
  { name: 'n', type: 'INT64' },
  { name: 'big', type: 'BIGNUMERIC' },
  { name: 'plan', type: 'STRING' },
];

async function fresh(): Promise<string> {
  const id = `t${++n}`;
  await bq.dataset(ds).createTable(id, { schema: { fields } });
  return id;
}

const run = (sql: string) => bq.query({ query: sql.replace(/@@/g, `tributary-test.${ds}`), location: 'US' }).then(([rows]) => rows as Array<Record<string, unknown>>);
const insert = (table: string, rows: Array<Record<string, unknown>>) => bq.dataset(ds).table(table).insert(rows.map((json, i) => ({ insertId: `${table}-${now}-${i}`, json })), { raw: true });

test('tables.patch cannot change a type; ALTER COLUMN SET DATA TYPE widens INT64 to FLOAT64 and keeps the rows', async () => {
  const t = await fresh();
  now += 3_600_000;
  await insert(t, [{ _id: 'a', n: 41 }, { _id: 'b', n: -7 }]);
  const patched = await failure(bq.dataset(ds).table(t).setMetadata({ schema: { fields: fields.map((f) => (f.name === 'n' ? { ...f, type: 'FLOAT64' } : f)) } }));
  expect(patched).toEqual({ code: 400, reason: 'invalid', message: `Provided Schema does not match Table tributary-test:${ds}.${t}. Field n has changed type from INTEGER to FLOAT` });

  await run(`ALTER TABLE \`@@.${t}\` ALTER COLUMN n SET DATA TYPE FLOAT64`);
  const [meta] = await bq.dataset(ds).table(t).getMetadata();
  expect(meta.schema.fields[1]).toEqual({ name: 'n', type: 'FLOAT', mode: 'NULLABLE' });
  expect(fake.stats.statements.ALTER_TABLE).toBeGreaterThanOrEqual(1);

  // Streaming still checks the old type for a while, as it does for a new column.
  const early = (await insert(t, [{ _id: 'c', n: 1.5 }]).catch((e: unknown) => e)) as { name: string; errors: Array<{ errors: Array<{ reason: string; location: string; message: string }> }> };
  expect(early.name).toBe('PartialFailureError');
  expect(early.errors[0]!.errors[0]).toMatchObject({ reason: 'invalid', message: 'Cannot convert value to integer (bad value): 1.5' });
  now += 120_000;
  await insert(t, [{ _id: 'c', n: 1.5 }]);
  expect(await run(`SELECT _id, n FROM \`@@.${t}\` ORDER BY _id`)).toEqual([
    { _id: 'a', n: 41 },
    { _id: 'b', n: -7 },
    { _id: 'c', n: 1.5 },
  ]);
});

test('INT64 widens to BIGNUMERIC; other changes are refused in BigQuery words', async () => {
  const t = await fresh();
  await run(`ALTER TABLE \`@@.${t}\` ALTER COLUMN n SET DATA TYPE BIGNUMERIC`);
  expect((await bq.dataset(ds).table(t).getMetadata())[0].schema.fields[1].type).toBe('BIGNUMERIC');
  const toFloat = await failure(run(`ALTER TABLE \`@@.${t}\` ALTER COLUMN big SET DATA TYPE FLOAT64`));
  expect(toFloat).toMatchObject({ code: 400, reason: 'invalidQuery', message: `Provided Schema does not match Table tributary-test:${ds}.${t}. Field big has changed type from BIGNUMERIC to FLOAT` });
  const toString = await failure(run(`ALTER TABLE \`@@.${t}\` ALTER COLUMN n SET DATA TYPE STRING`));
  expect(toString.message).toContain('existing column type BIGNUMERIC is not assignable to STRING');
  const narrow = await failure(run(`ALTER TABLE \`@@.${t}\` ALTER COLUMN plan SET DATA TYPE INT64`));
  expect(narrow.message).toContain('existing column type STRING is not assignable to INT64');
  expect((await failure(run(`ALTER TABLE \`@@.${t}\` ALTER COLUMN nope SET DATA TYPE FLOAT64`))).message).toContain('Column nope not found');
  await run(`ALTER TABLE \`@@.${t}\` ALTER COLUMN IF EXISTS nope SET DATA TYPE FLOAT64`);
  await run(`ALTER TABLE IF EXISTS \`@@.missing\` ALTER COLUMN n SET DATA TYPE FLOAT64`);
  expect((await failure(run(`ALTER TABLE \`@@.${t}\` DROP COLUMN plan`))).message).toContain('only ALTER COLUMN');
});

test('one statement changes several columns, all or none; each applied one counts as a table update', async () => {
  const t = await fresh();
  const refused = await failure(run(`ALTER TABLE \`@@.${t}\` ALTER COLUMN n SET DATA TYPE FLOAT64, ALTER COLUMN plan SET DATA TYPE INT64`));
  expect(refused.code).toBe(400);
  expect((await bq.dataset(ds).table(t).getMetadata())[0].schema.fields[1].type).toBe('INTEGER');
  for (let i = 0; i < 5; i++) await run(`ALTER TABLE \`@@.${t}\` ALTER COLUMN n SET DATA TYPE INT64`);
  expect(await failure(run(`ALTER TABLE \`@@.${t}\` ALTER COLUMN n SET DATA TYPE FLOAT64`))).toMatchObject({ code: 403, reason: 'rateLimitExceeded' });
});
