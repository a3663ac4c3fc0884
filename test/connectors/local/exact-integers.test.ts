import { parseExactJson } from '../../../src/core/records/exact-json';
import { allOk, event, openFixture, user, type LocalFixture } from './helpers';

const ID18 = 603851970716743426n;
const NEG18 = -603851970716743426n;
const ID20 = 12345678901234567890n;
const NEG20 = -98765432109876543210n;

describe('local connector: integers beyond 2^53', () => {
  let fx: LocalFixture;
  afterEach(async () => {
    await fx.cleanup();
  });

  const columnTypes = async () =>
    Object.fromEntries((await fx.rows(`SELECT column_name AS name, data_type AS type FROM duckdb_columns() WHERE table_name = 'events' AND NOT starts_with(column_name, '_') ORDER BY column_index`)).map((r) => [r.name, r.type]));

  it('stores 64-bit ones in BIGINT, wider ones in HUGEINT, and every one exactly in _properties', async () => {
    fx = await openFixture();
    expect(allOk(await fx.write([event('a', { id: ID18, neg: NEG18, wide: ID20, wneg: NEG20, nested: { list: [ID18, NEG20] } })]))).toBe(true);
    expect(await columnTypes()).toEqual({ id: 'BIGINT', neg: 'BIGINT', wide: 'HUGEINT', wneg: 'HUGEINT', nested: 'JSON' });
    const [row] = await fx.rows(`SELECT id::VARCHAR AS id, neg::VARCHAR AS neg, wide::VARCHAR AS wide, wneg::VARCHAR AS wneg, nested, _properties FROM events`);
    expect(row).toMatchObject({ id: '603851970716743426', neg: '-603851970716743426', wide: '12345678901234567890', wneg: '-98765432109876543210' });
    expect(parseExactJson(row!.nested as string)).toEqual({ list: [ID18, NEG20] });
    expect(row!._properties).toBe('{"id":603851970716743426,"neg":-603851970716743426,"wide":12345678901234567890,"wneg":-98765432109876543210,"nested":{"list":[603851970716743426,-98765432109876543210]}}');
  });

  it('widens a BIGINT column to HUGEINT for a wider whole number, keeping the values stored', async () => {
    fx = await openFixture();
    await fx.write([event('a', { n: 1 }), event('a', { n: ID18 })]);
    await fx.write([event('a', { n: ID20 })]);
    expect((await columnTypes()).n).toBe('HUGEINT');
    expect((await fx.rows('SELECT n::VARCHAR AS n FROM events ORDER BY _id')).map((r) => r.n)).toEqual(['1', '603851970716743426', '12345678901234567890']);
  });

  it('never rounds one into DOUBLE: a BIGINT column holding one stays BIGINT when a fraction arrives', async () => {
    fx = await openFixture();
    await fx.write([event('a', { n: ID18 })]);
    expect(allOk(await fx.write([event('a', { n: 2.5 })]))).toBe(true);
    expect((await columnTypes()).n).toBe('BIGINT');
    const rows = await fx.rows(`SELECT n::VARCHAR AS n, _properties->>'$.n' AS raw FROM events ORDER BY _id`);
    expect(rows).toEqual([
      { n: '603851970716743426', raw: '603851970716743426' },
      { n: null, raw: '2.5' },
    ]);
  });

  it('leaves the DOUBLE column of an earlier fraction NULL rather than rounded', async () => {
    fx = await openFixture();
    await fx.write([event('a', { n: 0.5 })]);
    await fx.write([event('a', { n: ID18 })]);
    const rows = await fx.rows(`SELECT n, _properties->>'$.n' AS raw FROM events ORDER BY _id`);
    expect(rows.map((r) => [r.n, r.raw])).toEqual([
      [0.5, '0.5'],
      [null, '603851970716743426'],
    ]);
  });

  it('keeps them exact through an upsert that merges the stored state', async () => {
    fx = await openFixture();
    await fx.write([user('u1', { shop: ID18, wide: NEG20 })]);
    await fx.write([user('u1', { plan: 'pro' })]);
    const [row] = await fx.rows(`SELECT shop::VARCHAR AS shop, wide::VARCHAR AS wide, _properties FROM users`);
    expect(row).toMatchObject({ shop: '603851970716743426', wide: '-98765432109876543210' });
    expect(parseExactJson(row!._properties as string)).toEqual({ shop: ID18, wide: NEG20, plan: 'pro' });
  });
});
