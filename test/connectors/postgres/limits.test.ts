import { allOk, event, user, usePostgres } from './pg-fixture';

const pg = usePostgres('limits');

describe('postgres: 1 600 columns a table', () => {
  test('columns dropped by hand count towards the 1 600 a table can have: further properties stay in _properties rather than fail the batch', async () => {
    const f = await pg.fixture();
    await f.write([event('a', { kept: 1 })]);
    // 1 580 columns added and dropped: PostgreSQL never reuses a dropped column's number.
    const names = Array.from({ length: 1580 }, (_, i) => `gone_${i}`);
    await f.admin(`ALTER TABLE "${f.schema}".events ${names.map((n) => `ADD COLUMN ${n} int`).join(', ')}`);
    await f.admin(`ALTER TABLE "${f.schema}".events ${names.map((n) => `DROP COLUMN ${n}`).join(', ')}`);
    const p = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`new_${i}`, i]));
    expect(allOk(await f.write([event('a', { kept: 2, ...p })]))).toBe(true);
    // 8 fixed columns + kept + 1 580 dropped leave 11.
    expect(Object.keys(await f.columns('events'))).toEqual(['kept', ...Object.keys(p).slice(0, 11)]);
    const rows = await f.rows('events');
    expect(rows[1]).toMatchObject({ kept: 2, new_10: 10, _properties: { kept: 2, ...p } });
    expect(allOk(await f.write([event('a', { new_29: 1, later: 1 })]))).toBe(true);
  });

  /*
   * With the default maxColumns (1000) the 1 600 columns a table can have are never reached: events
   * have 8 fixed columns, users 5, sessions 6, so at most 1 008 columns; widening a column keeps
   * its number; only columns dropped by hand use numbers up (the test above). The highest
   * maxColumns the settings take, 1500, stays under it too.
   */
  test('maxColumns 1500: 1 500 columns a table, the rest in _properties', async () => {
    const f = await pg.fixture({ maxColumns: 1500 });
    const many = Object.fromEntries(Array.from({ length: 1600 }, (_, i) => [`s${i}`, `v${i}`]));
    expect(allOk(await f.write([event('a', many), user('u1', many)]))).toBe(true);
    expect(Object.keys(await f.columns('events'))).toHaveLength(1500);
    expect(Object.keys(await f.columns('users'))).toHaveLength(1500);
    expect(allOk(await f.write([event('a', { s0: 'again', extra: 1 }), user('u1', { extra: 2 })]))).toBe(true);
    const [first, second] = await f.rows('events');
    expect(first).toMatchObject({ s0: 'v0', s1000: 'v1000', _properties: many });
    expect(second).toMatchObject({ s0: 'again', _properties: { s0: 'again', extra: 1 } });
    expect((await f.rows('users'))[0]!._properties).toEqual({ ...many, extra: 2 });
  });
});

describe('postgres: rows PostgreSQL cannot hold', () => {
  test('a record with more numbers than a row holds (8 KB a row, a bigint 8 bytes) is stored: as many cells as fit, the rest in _properties', async () => {
    const f = await pg.fixture();
    const wide = Object.fromEntries(Array.from({ length: 1100 }, (_, i) => [`p${i}`, i * 1000]));
    expect(allOk(await f.write([event('a', wide), event('b', { p0: 1 }), user('u1', wide)]))).toBe(true);
    expect(Object.keys(await f.columns('events'))).toHaveLength(1000);
    const [row, other] = await f.rows('events');
    expect(row!._properties).toEqual(wide);
    expect(row!.p0).toBe(0);
    const filled = Object.keys(wide).filter((k) => row![k] !== null && row![k] !== undefined);
    expect(filled.length).toBeGreaterThan(900);
    for (const k of filled) expect(row![k]).toBe(wide[k]);
    expect(other).toMatchObject({ p0: 1, _properties: { p0: 1 } });
    // The wide user is updated again, and stays whole in _properties.
    expect(allOk(await f.write([user('u1', { p1099: -1, extra: 'x'.repeat(100) })]))).toBe(true);
    expect((await f.rows('users'))[0]!._properties).toEqual({ ...wide, p1099: -1, extra: 'x'.repeat(100) });
  });
});
