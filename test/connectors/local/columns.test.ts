import { allOk, event, json, openFixture, user, type LocalFixture } from './helpers';

describe('local connector: columns follow the data', () => {
  let fx: LocalFixture;
  afterEach(async () => {
    await fx.cleanup();
  });

  const columnTypes = async (table: string) =>
    Object.fromEntries(
      (await fx.rows(`SELECT column_name AS name, data_type AS type FROM duckdb_columns() WHERE table_name = '${table}' AND column_name NOT IN ('_id', '_uid', '_sid', '_event', '_event_at', '_received_at', '_context', '_properties') ORDER BY column_index`)).map((r) => [r.name, r.type]),
    );

  it('adds a typed column for each new property, in arrival order', async () => {
    fx = await openFixture();
    await fx.write([event('a', { s: 'x', i: 1 })]);
    await fx.write([event('a', { f: 1.5, b: false, o: { k: [1, 2] }, l: [1, 'two'] })]);
    expect(await columnTypes('events')).toEqual({ s: 'VARCHAR', i: 'BIGINT', f: 'DOUBLE', b: 'BOOLEAN', o: 'JSON', l: 'JSON' });
  });

  it('stores nested objects and arrays as JSON that DuckDB can query', async () => {
    fx = await openFixture();
    await fx.write([event('a', { cart: { items: [{ sku: 'A1', qty: 2 }], total: 9.5 }, tags: ['x', 'y'] })]);
    const [row] = await fx.rows(`SELECT cart->>'$.items[0].sku' AS sku, (cart->'$.total')::DOUBLE AS total, json_array_length(tags)::INT AS n, cart FROM events`);
    expect(row).toMatchObject({ sku: 'A1', total: 9.5, n: 2 });
    expect(json(row!.cart)).toEqual({ items: [{ sku: 'A1', qty: 2 }], total: 9.5 });
  });

  it('widens an integer column to float when a fraction arrives, keeping the values stored', async () => {
    fx = await openFixture();
    await fx.write([event('a', { n: 1 }), event('a', { n: 9_007_199_254_740_991 })]);
    expect((await columnTypes('events')).n).toBe('BIGINT');
    await fx.write([event('a', { n: 2.5 })]);
    expect((await columnTypes('events')).n).toBe('DOUBLE');
    expect((await fx.rows('SELECT n FROM events ORDER BY _id')).map((r) => r.n)).toEqual([1, 9_007_199_254_740_991, 2.5]);
  });

  it('creates a float column when a batch starts integer and turns fractional', async () => {
    fx = await openFixture();
    await fx.write([event('a', { n: 1 }), event('a', { n: 0.5 })]);
    expect((await columnTypes('events')).n).toBe('DOUBLE');
    await fx.write([event('a', { n: 7 })]);
    expect((await fx.rows('SELECT n FROM events ORDER BY _id')).map((r) => r.n)).toEqual([1, 0.5, 7]);
  });

  it('keeps a value of a conflicting type in _properties, with NULL in the typed column', async () => {
    fx = await openFixture();
    await fx.write([event('a', { n: 1 })]);
    const outcomes = await fx.write([event('a', { n: 'one' }), event('a', { n: { deep: true } }), event('a', { n: true })]);
    expect(allOk(outcomes)).toBe(true);
    expect((await columnTypes('events')).n).toBe('BIGINT');
    const rows = await fx.rows(`SELECT n, _properties->'$.n' AS raw FROM events ORDER BY _id`);
    expect(rows.map((r) => r.n)).toEqual(['1', null, null, null]);
    expect(rows.map((r) => json(r.raw))).toEqual([1, 'one', { deep: true }, true]);
  });

  it('applies the same rule to upserted users', async () => {
    fx = await openFixture();
    await fx.write([user('u1', { plan: 'pro' }), user('u2', { plan: 'free' })]);
    await fx.write([user('u1', { plan: 3 })]);
    const rows = await fx.rows(`SELECT _uid, plan, _properties->'$.plan' AS raw FROM users ORDER BY _uid`);
    expect(rows).toEqual([
      { _uid: 'u1', plan: null, raw: '3' },
      { _uid: 'u2', plan: 'free', raw: '"free"' },
    ]);
  });

  it('takes __proto__, constructor and other awkward names as ordinary columns', async () => {
    fx = await openFixture();
    const names = ['__proto__', 'constructor', 'toString', 'a b', 'x"y', "it's", 'select', 'ünïcødé', '🦆', 'a.b'];
    const p = Object.fromEntries(names.map((n, i) => [n, i]));
    expect(allOk(await fx.write([event('a', p), user('u1', p)]))).toBe(true);
    expect(Object.keys(await columnTypes('events'))).toEqual(names);
    const [row] = await fx.rows('SELECT * FROM users');
    for (const [i, name] of names.entries()) expect(row![name]).toBe(String(i));
    expect(json(row!._properties)).toEqual(p);
    expect(({} as Record<string, unknown>).constructor).toBe(Object);
  });

  it('gives a name that differs only in case from an existing column no column of its own', async () => {
    fx = await openFixture();
    await fx.write([event('a', { Plan: 'pro' })]);
    await fx.write([event('a', { plan: 'free', PLAN: 'x' })]);
    expect(await columnTypes('events')).toEqual({ Plan: 'VARCHAR' });
    const rows = await fx.rows(`SELECT "Plan", _properties FROM events ORDER BY _id`);
    expect(rows.map((r) => r.Plan)).toEqual(['pro', null]);
    expect(json(rows[1]!._properties)).toEqual({ plan: 'free', PLAN: 'x' });
  });

  it('resolves a case collision within one batch in favour of the first spelling', async () => {
    fx = await openFixture();
    await fx.write([user('u1', { Email: 'a@x' }), user('u2', { email: 'b@x' })]);
    expect(await columnTypes('users')).toEqual({ Email: 'VARCHAR' });
    expect((await fx.rows(`SELECT _uid, "Email" AS e FROM users ORDER BY _uid`)).map((r) => r.e)).toEqual(['a@x', null]);
  });

  it('never turns reserved names (any case), the empty name or a NUL into columns', async () => {
    fx = await openFixture();
    const p = { _PROPERTIES: 1, _Context: 2, _ID: 3, _event_at: 4, '': 5, 'a\u0000b': 6, ok: 7 };
    expect(allOk(await fx.write([event('a', p)]))).toBe(true);
    expect(await columnTypes('events')).toEqual({ ok: 'BIGINT' });
    const [row] = await fx.rows('SELECT _id, _properties FROM events');
    expect(row!._id).not.toBe('3');
    expect(json(row!._properties)).toEqual(p);
  });

  it('stops adding columns at maxColumns and keeps the rest in _properties', async () => {
    fx = await openFixture({ maxColumns: 2 });
    await fx.write([event('a', { a: 1, b: 2, c: 3 })]);
    expect(await columnTypes('events')).toEqual({ a: 'BIGINT', b: 'BIGINT' });
    expect(json((await fx.rows('SELECT _properties FROM events'))[0]!._properties)).toEqual({ a: 1, b: 2, c: 3 });
  });
});
