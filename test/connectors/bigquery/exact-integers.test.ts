import type { BigQueryInt } from '@google-cloud/bigquery';
import { parseExactJson } from '../../../src/core/records/exact-json';
import { event, PROJECT, readerClient, statuses, user, useWriterPerTest } from './helpers';

// The client's transport on Node's fetch under jest: see test/fakes/bigquery/jest-transport.ts.
jest.mock('teeny-request', () => jest.requireActual<typeof import('../../fakes/bigquery/jest-transport')>('../../fakes/bigquery/jest-transport').teenyRequestOnNativeFetch());

/** Integers beyond 2^53 through the connector, the real client and the fake, read back exactly. */
const bq = useWriterPerTest();

const ID18 = 603851970716743426n;
const NEG18 = -603851970716743426n;
const ID20 = 12345678901234567890n;
const NEG20 = -98765432109876543210n;

/** Rows with INT64 as its text (`wrapIntegers`) and BIGNUMERIC as plain digits. */
async function exactRows(sql: string): Promise<Array<Record<string, unknown>>> {
  const [rows] = await readerClient(bq.fake).query({ query: sql.replace(/@@/g, `${PROJECT}.${bq.fx.dataset}`), wrapIntegers: true });
  return (rows as Array<Record<string, unknown>>).map((row) =>
    // BigQueryInt extends Number: read its text before anything numeric. BIGNUMERIC comes as a Big.
    Object.fromEntries(Object.entries(row).map(([k, v]) => [k, v !== null && typeof v === 'object' && 'value' in v ? (v as BigQueryInt).value : v !== null && typeof v === 'object' && 'toFixed' in v ? (v as { toFixed: () => string }).toFixed() : v])),
  );
}

const fieldTypes = (table: string) => Object.fromEntries(bq.fake.table(PROJECT, bq.fx.dataset, table)!.fields.filter((f) => !f.name.startsWith('_')).map((f) => [f.name, f.type]));

it('writes 64-bit ones to INT64 and wider ones to BIGNUMERIC, as strings, and reads back every digit', async () => {
  const e = event('order', { id: ID18, neg: NEG18, wide: ID20, wneg: NEG20, nested: { ids: [ID18, ID20] }, small: 7 }, { uid: String(ID18) });
  expect(statuses(await bq.fx.write([e]))).toEqual(['ok']);
  expect(fieldTypes('events')).toEqual({ id: 'INTEGER', neg: 'INTEGER', wide: 'BIGNUMERIC', wneg: 'BIGNUMERIC', nested: 'JSON', small: 'INTEGER' });
  const [row] = await exactRows('SELECT _uid, id, neg, wide, wneg, small, nested, _properties FROM `@@.events`');
  expect(row).toMatchObject({ _uid: '603851970716743426', id: '603851970716743426', neg: '-603851970716743426', wide: '12345678901234567890', wneg: '-98765432109876543210', small: '7' });
  // BigQuery's JSON keeps INT64 and UINT64 numbers; a wider one is kept as a string with its digits.
  expect(row!._properties).toBe('{"id":603851970716743426,"neg":-603851970716743426,"wide":12345678901234567890,"wneg":"-98765432109876543210","nested":{"ids":[603851970716743426,12345678901234567890]},"small":7}');
  expect(parseExactJson(row!.nested as string)).toEqual({ ids: [ID18, ID20] });
});

it('keeps them exact through a MERGE of users', async () => {
  expect(statuses(await bq.fx.write([user('u1', { shop: ID18, wide: ID20, wneg: NEG20 })]))).toEqual(['ok']);
  expect(statuses(await bq.fx.write([user('u1', { plan: 'pro', shop: NEG18 })]))).toEqual(['ok']);
  const [row] = await exactRows('SELECT shop, wide, wneg, plan, _properties FROM `@@.users`');
  expect(row).toEqual({ shop: '-603851970716743426', wide: '12345678901234567890', wneg: '-98765432109876543210', plan: 'pro', _properties: '{"shop":-603851970716743426,"wide":12345678901234567890,"wneg":"-98765432109876543210","plan":"pro"}' });
});

it('never writes one rounded into a FLOAT64 column: the cell is NULL, _properties has the digits', async () => {
  await bq.fx.write([event('e', { n: 0.5 })]);
  await bq.fx.write([event('e', { n: ID18 })]);
  const rows = await exactRows('SELECT n, _properties FROM `@@.events` ORDER BY _id');
  expect(rows).toEqual([
    { n: 0.5, _properties: '{"n":0.5}' },
    { n: null, _properties: '{"n":603851970716743426}' },
  ]);
});
