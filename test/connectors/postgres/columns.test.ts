import { RetryableError } from '../../../connectors/errors';
import type { TrackedRecord } from '../../../src/core/records/types';
import { allOk, event, user, usePostgres, type PgFixture } from './pg-fixture';

const pg = usePostgres('columns');

/** Writes as delivery does: a RetryableError means the same batch again. */
async function deliver(f: PgFixture, records: TrackedRecord[]): Promise<{ retried: number }> {
  for (let retried = 0; ; retried++) {
    try {
      expect(allOk(await f.write(records))).toBe(true);
      return { retried };
    } catch (err) {
      if (!(err instanceof RetryableError) || retried > 0) throw err;
    }
  }
}

describe('postgres: types of property columns', () => {
  test('whole numbers bigint, beyond 64 bits numeric with every digit, beyond 2^53 exact in bigint; fractions double precision; booleans; objects and arrays jsonb', async () => {
    const f = await pg.fixture();
    const huge = 2n ** 100n + 7n;
    const big = 2n ** 62n + 1n;
    const nested = { deep: { n: 2n ** 63n - 1n, list: [1, 2.5, 'x', null, 2n ** 64n + 3n] } };
    expect(allOk(await f.write([event('a', { i: 42, h: huge, b: big, f: 0.1, t: true, o: nested, l: [big, 'y'], s: 'text' })]))).toBe(true);
    expect(await f.columns('events')).toEqual({ i: 'bigint', h: 'numeric', b: 'bigint', f: 'double precision', t: 'boolean', o: 'jsonb', l: 'jsonb', s: 'text' });
    const [row] = await f.rows('events');
    expect(row).toMatchObject({ i: 42, h: huge, b: big, f: 0.1, t: true, o: nested, l: [big, 'y'], s: 'text' });
    expect(row!._properties).toEqual({ i: 42, h: huge, b: big, f: 0.1, t: true, o: nested, l: [big, 'y'], s: 'text' });
    // Read as SQL reads them, not only through JSON.
    const text = await f.query(`SELECT h::text AS h, b::text AS b, (o->'deep'->>'n') AS n FROM "${f.schema}".events`);
    expect(text).toEqual([{ h: huge.toString(), b: big.toString(), n: (2n ** 63n - 1n).toString() }]);
  });

  test('a fraction arriving in a bigint column widens it to double precision, keeping the values', async () => {
    const f = await pg.fixture();
    await f.write([event('a', { n: 1 }), event('a', { n: 9_007_199_254_740_991 })]);
    expect((await f.columns('events')).n).toBe('bigint');
    await f.write([event('a', { n: 2.5 })]);
    expect((await f.columns('events')).n).toBe('double precision');
    expect((await f.rows('events')).map((r) => r.n)).toEqual([1, 9_007_199_254_740_991, 2.5]);
  });

  test('a bigint column holding a number beyond 2^53 is not widened: the fraction stays in _properties', async () => {
    const f = await pg.fixture();
    const big = 2n ** 60n + 1n;
    await f.write([event('a', { n: big })]);
    expect(allOk(await f.write([event('a', { n: 2.5 }), event('a', { n: 3 })]))).toBe(true);
    expect((await f.columns('events')).n).toBe('bigint');
    const rows = await f.rows('events');
    expect(rows.map((r) => r.n)).toEqual([big, null, 3]);
    expect(rows.map((r) => (r._properties as Record<string, unknown>).n)).toEqual([big, 2.5, 3]);
  });

  test('a value of another type leaves its cell NULL and stays in _properties', async () => {
    const f = await pg.fixture();
    await f.write([event('a', { n: 1, flag: true })]);
    expect(allOk(await f.write([event('a', { n: 'one', flag: 'yes' }), event('a', { n: { deep: 1 }, flag: 0 }), event('a', { n: false })]))).toBe(true);
    expect(await f.columns('events')).toEqual({ n: 'bigint', flag: 'boolean' });
    const rows = await f.rows('events');
    expect(rows.map((r) => [r.n, r.flag])).toEqual([
      [1, true],
      [null, null],
      [null, null],
      [null, null],
    ]);
    expect(rows.map((r) => r._properties)).toEqual([{ n: 1, flag: true }, { n: 'one', flag: 'yes' }, { n: { deep: 1 }, flag: 0 }, { n: false }]);
  });

  test('the same rule for users: a string in a number column is NULL there, kept in _properties', async () => {
    const f = await pg.fixture();
    await f.write([user('u1', { age: 30 })]);
    await f.write([user('u1', { age: 'thirty' })]);
    const [row] = await f.rows('users', '_uid');
    expect(row).toMatchObject({ age: null, _properties: { age: 'thirty' } });
  });
});

describe('postgres: names', () => {
  test('Plan and plan are two columns', async () => {
    const f = await pg.fixture();
    await f.write([event('a', { Plan: 'pro' }), event('a', { plan: 'free', PLAN: 3 })]);
    expect(await f.columns('events')).toEqual({ Plan: 'text', plan: 'text', PLAN: 'bigint' });
    expect((await f.rows('events')).map((r) => [r.Plan, r.plan, r.PLAN])).toEqual([
      ['pro', null, null],
      [null, 'free', 3],
    ]);
  });

  test('a name of 64 bytes is no column (PostgreSQL would cut it to 63) but is in _properties; 63 bytes is one, multi-byte characters counted in bytes', async () => {
    const f = await pg.fixture();
    const p = {
      ['a'.repeat(63)]: 1,
      ['a'.repeat(64)]: 2,
      // 31 × 2 bytes + 1 = 63 bytes, 32 characters.
      ['é'.repeat(31) + 'x']: 3,
      // 32 × 2 bytes = 64 bytes, only 32 characters.
      ['é'.repeat(32)]: 4,
      // 15 × 4 bytes + 3 = 63 bytes.
      ['🦆'.repeat(15) + 'abc']: 5,
      // 16 × 4 bytes = 64 bytes.
      ['🦆'.repeat(16)]: 6,
    };
    expect(allOk(await f.write([event('a', p)]))).toBe(true);
    expect(Object.keys(await f.columns('events'))).toEqual(['a'.repeat(63), 'é'.repeat(31) + 'x', '🦆'.repeat(15) + 'abc']);
    const [row] = await f.rows('events');
    expect(row!._properties).toEqual(p);
    expect(row!['a'.repeat(63)]).toBe(1);
  });

  test('beyond maxColumns, properties stay in _properties, per table', async () => {
    const f = await pg.fixture({ maxColumns: 5 });
    const p = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`p${i}`, i]));
    await f.write([event('a', p), user('u1', p)]);
    await f.write([event('a', { late: 'x' })]);
    expect(Object.keys(await f.columns('events'))).toEqual(['p0', 'p1', 'p2', 'p3', 'p4']);
    expect(Object.keys(await f.columns('users'))).toEqual(['p0', 'p1', 'p2', 'p3', 'p4']);
    expect((await f.rows('events')).map((r) => r._properties)).toEqual([p, { late: 'x' }]);
    expect((await f.rows('users'))[0]!._properties).toEqual(p);
  });

});

describe('postgres: text PostgreSQL refuses', () => {
  test('NUL in text, in a key, inside jsonb, in a user id; a literal \\u0000 (backslash, u0000) is stored as sent', async () => {
    const f = await pg.fixture();
    const literal = '\\u0000';
    const p = { s: 'a\u0000b', 'k\u0000ey': 1, o: { 'x\u0000': 'y\u0000', arr: ['\u0000'] }, lit: literal, litInJson: { v: literal, w: `\\${literal}`, z: '\\\u0000' } };
    expect(await f.write([event('a', p, { uid: 'u\u00001' }), user('u\u0000\u00001', { s: 'z\u0000' })])).toEqual([{ status: 'ok' }, { status: 'ok' }]);
    expect(Object.keys(await f.columns('events'))).toEqual(['s', 'o', 'lit', 'litInJson']);
    const [row] = await f.rows('events');
    expect(row).toMatchObject({
      s: 'a\uFFFDb',
      o: { 'x\uFFFD': 'y\uFFFD', arr: ['\uFFFD'] },
      lit: literal,
      litInJson: { v: literal, w: `\\${literal}`, z: '\\\uFFFD' },
      _uid: 'u\uFFFD1',
      _properties: { s: 'a\uFFFDb', 'k\uFFFDey': 1, o: { 'x\uFFFD': 'y\uFFFD', arr: ['\uFFFD'] }, lit: literal, litInJson: { v: literal, w: `\\${literal}`, z: '\\\uFFFD' } },
    });
    // The same user again, NUL and all, is the same row.
    expect(allOk(await f.write([user('u\u0000\u00001', { t: 1 })]))).toBe(true);
    expect(await f.rows('users')).toEqual([expect.objectContaining({ _uid: 'u\uFFFD\uFFFD1', s: 'z\uFFFD', t: 1, _properties: { s: 'z\uFFFD', t: 1 } })]);
  });
});

describe('postgres: tables changed by hand meanwhile', () => {
  /** Two batches, the second adding no column: the writer then knows the tables' columns, as it does in steady traffic. */
  const warm = async (f: PgFixture, p: Record<string, number | string>) => {
    await f.write([event('a', p), user('u1', p)]);
    await f.write([event('a', p), user('u1', p)]);
  };

  test('a column added by hand with the type Tributary would give it is used', async () => {
    const f = await pg.fixture();
    await warm(f, { x: 1 });
    await f.admin(`ALTER TABLE "${f.schema}".events ADD COLUMN plan text`);
    expect(await deliver(f, [event('a', { plan: 'pro' })])).toEqual({ retried: 0 });
    expect((await f.rows('events')).map((r) => r.plan)).toEqual([null, null, 'pro']);
  });

  test.each([
    ['varchar(5)', 'longer than five', 'abc'],
    ['date', 'not a date', '2026-01-01'],
    ['integer', 'text', 5],
  ])('a column added by hand as %s is left alone: the values stay in _properties, the batch is written', async (type, first, later) => {
    const f = await pg.fixture();
    await warm(f, { x: 1 });
    for (const table of ['events', 'users']) await f.admin(`ALTER TABLE "${f.schema}".${table} ADD COLUMN c ${type}`);
    const { retried } = await deliver(f, [event('a', { c: first }), event('a', { y: 1 }), user('u1', { c: first })]);
    expect((await f.rows('events')).slice(2).map((r) => [r.c, r.y, r._properties])).toEqual([
      [null, null, { c: first }],
      [null, 1, { y: 1 }],
    ]);
    expect((await f.rows('users'))[0]).toMatchObject({ c: null, _properties: { x: 1, c: first } });
    // Later batches too, even with values the column could take: Tributary writes only columns of its own types.
    await deliver(f, [event('a', { c: later })]);
    expect((await f.rows('events'))[4]).toMatchObject({ c: null, _properties: { c: later } });
    expect(retried).toBe(0);
  });

  test('a column dropped by hand: the next batch reads the tables again and adds it back, without a retry', async () => {
    const f = await pg.fixture();
    await warm(f, { x: 1, y: 'a' });
    await f.admin(`ALTER TABLE "${f.schema}".events DROP COLUMN y`);
    await f.admin(`ALTER TABLE "${f.schema}".users DROP COLUMN y`);
    expect(await deliver(f, [event('a', { x: 2, y: 'b' }), user('u1', { x: 2 })])).toEqual({ retried: 0 });
    expect(await f.columns('events')).toEqual({ x: 'bigint', y: 'text' });
    expect((await f.rows('events')).map((r) => [r.x, r.y])).toEqual([
      [1, null],
      [1, null],
      [2, 'b'],
    ]);
    // The user's stored y comes back into its column.
    expect((await f.rows('users'))[0]).toMatchObject({ x: 2, y: 'a', _properties: { x: 2, y: 'a' } });
  });
});
