import { allOk, event, json, openFixture, session, user, type LocalFixture } from './helpers';

describe('local connector: users and sessions', () => {
  let fx: LocalFixture;
  beforeEach(async () => {
    fx = await openFixture();
  });
  afterEach(async () => {
    await fx.cleanup();
  });

  const one = async (table: 'users' | 'sessions', key: string) => {
    const rows = await fx.rows(`SELECT * FROM ${table} WHERE ${table === 'users' ? '_uid' : '_sid'} = '${key}'`);
    expect(rows).toHaveLength(1);
    return rows[0]!;
  };

  it('merges updates across batches: supplied properties change, null clears, the rest are kept', async () => {
    expect(allOk(await fx.write([user('u1', { plan: 'free', age: 30, city: 'Oslo' })]))).toBe(true);
    expect(allOk(await fx.write([user('u1', { plan: 'pro', age: null })]))).toBe(true);
    const row = await one('users', 'u1');
    expect(row).toMatchObject({ plan: 'pro', age: null, city: 'Oslo' });
    expect(json(row._properties)).toEqual({ plan: 'pro', city: 'Oslo' });
  });

  it('applies updates to one key in batch order', async () => {
    await fx.write([user('u1', { x: 1 }), user('u1', { x: 2, y: 'a' }), user('u1', { x: null }), user('u1', { x: 3 }), user('u2', { x: 9 }), user('u2', { x: null })]);
    expect(await one('users', 'u1')).toMatchObject({ x: '3', y: 'a' });
    const u2 = await one('users', 'u2');
    expect(u2.x).toBeNull();
    expect(json(u2._properties)).toEqual({});
  });

  it('applies updates in order across batches, and a value after a clear sets it again', async () => {
    await fx.write([user('u1', { n: 1 })]);
    await fx.write([user('u1', { n: null })]);
    expect((await one('users', 'u1')).n).toBeNull();
    await fx.write([user('u1', { n: 5 })]);
    expect((await one('users', 'u1')).n).toBe('5');
  });

  it('stores the id and receive time of the latest update, and keeps context when an update has none', async () => {
    const first = user('u1', { a: 1 }, { ip: '198.51.100.1' });
    const latest = user('u1', { a: 2 });
    await fx.write([first, latest]);
    const row = await one('users', 'u1');
    expect(row._id).toBe(latest.id);
    const [t] = await fx.rows(`SELECT epoch_ms(_received_at)::BIGINT::VARCHAR AS ms FROM users`);
    expect(t!.ms).toBe(String(Date.parse(latest.receivedAt)));
    expect(json(row._context)).toEqual({ ip: '198.51.100.1' });
  });

  it('replaces a nested object whole and keeps nulls inside it', async () => {
    await fx.write([user('u1', { prefs: { theme: 'dark', lang: 'en' } })]);
    await fx.write([user('u1', { prefs: { theme: null } })]);
    const row = await one('users', 'u1');
    expect(json(row.prefs)).toEqual({ theme: null });
    expect(json(row._properties)).toEqual({ prefs: { theme: null } });
  });

  it('keeps one row per key however often it is re-delivered', async () => {
    const batch = [user('u1', { a: 1 }), user('u1', { b: 2 })];
    await fx.write(batch);
    await fx.write(batch);
    expect(await fx.rows('SELECT count(*)::INT AS n FROM users')).toEqual([{ n: 1 }]);
    expect(await one('users', 'u1')).toMatchObject({ a: '1', b: '2' });
  });

  it("updates a session's _uid: the latest non-empty one wins, an update without one keeps it", async () => {
    await fx.write([session('s1', { step: 1 }, 'u1')]);
    await fx.write([session('s1', { step: 2 })]);
    expect(await one('sessions', 's1')).toMatchObject({ _uid: 'u1', step: '2' });
    await fx.write([session('s1', {}, 'u2'), session('s1', { step: 3 })]);
    expect(await one('sessions', 's1')).toMatchObject({ _uid: 'u2', step: '3' });
    await fx.write([session('s2', { step: 1 })]);
    expect((await one('sessions', 's2'))._uid).toBeNull();
  });

  it('writes users, sessions and events of one mixed batch in one go', async () => {
    expect(allOk(await fx.write([user('u1', { a: 1 }), event('view', { a: 'x' }), session('s1', { a: true }), user('u1', { b: 2 })]))).toBe(true);
    expect(await one('users', 'u1')).toMatchObject({ a: '1', b: '2' });
    expect(await one('sessions', 's1')).toMatchObject({ a: true });
    expect(await fx.rows('SELECT a FROM events')).toEqual([{ a: 'x' }]);
  });
});
