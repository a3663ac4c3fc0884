import { DuckDBConnection } from '@duckdb/node-api';
import { allOk, event, json, openFixture, user, type LocalFixture } from './helpers';

describe('local connector: events', () => {
  let fx: LocalFixture;
  beforeEach(async () => {
    fx = await openFixture();
  });
  afterEach(async () => {
    await fx.cleanup();
  });

  it('appends each event exactly once when a batch is delivered again', async () => {
    const batch = [event('view', { page: '/a' }), event('view', { page: '/b' }), event('click', { x: 1 })];
    expect(allOk(await fx.write(batch))).toBe(true);
    expect(allOk(await fx.write(batch))).toBe(true);
    expect(allOk(await fx.write([batch[1]!, event('view', { page: '/c' })]))).toBe(true);
    const rows = await fx.rows('SELECT _id, page FROM events ORDER BY _id');
    expect(rows.map((r) => r.page)).toEqual(['/a', '/b', null, '/c']);
  });

  it('writes a first delivery that meets stored events again without them, and only once', async () => {
    const live = { resend: false };
    const stored = event('view', { page: '/a' });
    expect(allOk(await fx.write([stored], live))).toBe(true);
    // A first delivery (not a resend) whose plain insert meets a stored _id past DuckDB's first
    // vectors of 2 048 rows: its transaction rolls back whole, the user's merge included, and the
    // batch goes again skipping the event.
    const fresh = Array.from({ length: 3000 }, () => event('view', { page: '/b' }));
    const batch = [user('u1', { plan: 'pro' }), ...fresh, stored, event('view', { page: '/c' })];
    expect(allOk(await fx.write(batch, live))).toBe(true);
    // The rolled-back insert left none of its keys behind (a skip of one would lose the event):
    // every fresh event is stored, and a new one still goes in by the plain insert.
    expect(allOk(await fx.write([fresh[0]!], live))).toBe(true);
    expect(allOk(await fx.write([event('view', { page: '/d' })], live))).toBe(true);
    const rows = await fx.rows('SELECT page, count(*)::INT AS n FROM events GROUP BY page ORDER BY page');
    expect(rows).toEqual([
      { page: '/a', n: 1 },
      { page: '/b', n: 3000 },
      { page: '/c', n: 1 },
      { page: '/d', n: 1 },
    ]);
    expect(await fx.rows('SELECT _uid, plan FROM users')).toEqual([{ _uid: 'u1', plan: 'pro' }]);
  });

  it('accepts a record repeated within one batch, stored once', async () => {
    const e = event('view', {});
    const outcomes = await fx.write([e, e]);
    expect(outcomes).toEqual([{ status: 'ok' }, { status: 'ok' }]);
    expect(await fx.rows('SELECT count(*)::INT AS n FROM events')).toEqual([{ n: 1 }]);
  });

  it('lays out the reserved columns, typed, then _context and _properties', async () => {
    const e = event('signup', { plan: 'pro' }, { uid: 'u1', sid: 's1', context: { ip: '203.0.113.9', userAgent: 'jest' } });
    await fx.write([e]);
    const columns = await fx.rows(`SELECT column_name AS name, data_type AS type FROM duckdb_columns() WHERE table_name = 'events' ORDER BY column_index`);
    expect(columns).toEqual([
      { name: '_id', type: 'VARCHAR' },
      { name: '_uid', type: 'VARCHAR' },
      { name: '_sid', type: 'VARCHAR' },
      { name: '_event', type: 'VARCHAR' },
      { name: '_event_at', type: 'TIMESTAMP WITH TIME ZONE' },
      { name: '_received_at', type: 'TIMESTAMP WITH TIME ZONE' },
      { name: '_context', type: 'JSON' },
      { name: '_properties', type: 'JSON' },
      { name: 'plan', type: 'VARCHAR' },
    ]);
    const [row] = await fx.rows(`SELECT _id, _uid, _sid, _event, epoch_ms(_event_at)::BIGINT::VARCHAR AS at, _context, _properties FROM events`);
    expect(row).toMatchObject({ _id: e.id, _uid: 'u1', _sid: 's1', _event: 'signup', at: String(Date.parse(e.eventAt!)) });
    expect(json(row!._context)).toEqual({ ip: '203.0.113.9', userAgent: 'jest' });
    expect(json(row!._properties)).toEqual({ plan: 'pro' });
  });

  it('leaves _uid, _sid and _context NULL when the event has none, and keeps null properties in _properties', async () => {
    await fx.write([event('view', { a: null, b: 1 })]);
    const [row] = await fx.rows('SELECT * FROM events');
    expect(row).toMatchObject({ _uid: null, _sid: null, _context: null, b: '1' });
    expect(json(row!._properties)).toEqual({ a: null, b: 1 });
    expect(Object.keys(row!)).not.toContain('a');
  });

  it('keeps the primary key on _id', async () => {
    await fx.writer.test(new AbortController().signal);
    const [pk] = await fx.rows(`SELECT constraint_column_names AS cols FROM duckdb_constraints() WHERE table_name = 'events' AND constraint_type = 'PRIMARY KEY'`);
    expect(pk!.cols).toEqual(['_id']);
  });

  describe('a first delivery, appended straight into the table', () => {
    const live = { resend: false };
    const values = (n: number) => ({
      count: n,
      big: 9007199254740993n,
      huge: -170141183460469231731687303715884105728n,
      ratio: n === 1 ? 0.1 : 1e21,
      tiny: 5e-324,
      flag: n === 1,
      text: 'a "quoted" line\nand é, 日本, 😀',
      nested: { a: [1, { b: null }], c: 'd' },
      list: [1, 'two', false],
      nothing: null,
    });
    const stored = (table: string) =>
      fx.rows(
        `SELECT _event, _uid, _sid, epoch_ms(_event_at)::VARCHAR AS at, epoch_ms(_received_at)::VARCHAR AS received, _context, _properties,
           count, big::VARCHAR AS big, huge::VARCHAR AS huge, ratio, tiny, flag, text, nested, list FROM ${table} ORDER BY count`,
      );

    it('stores every type as the staged write of a resend stores it', async () => {
      const make = () => [
        event('typed', values(1), { uid: 'u1', sid: 's1', context: { ip: '203.0.113.9', userAgent: 'jest' }, eventAt: '2026-03-01T12:34:56.789Z' }),
        event('typed', values(2), { eventAt: '2026-03-02T00:00:00.000Z' }),
      ];
      const appenders = jest.spyOn(DuckDBConnection.prototype, 'createAppender');
      expect(allOk(await fx.write(make(), live))).toBe(true);
      // Appended into the table, and not refused into the staged write.
      expect(appenders.mock.calls.map(([table]) => table)).toEqual(['events']);
      appenders.mockRestore();
      const appended = await stored('events');
      const other = await openFixture();
      try {
        expect(allOk(await other.write(make(), { resend: true }))).toBe(true);
        const staged = await other.rows(
          `SELECT _event, _uid, _sid, epoch_ms(_event_at)::VARCHAR AS at, epoch_ms(_received_at)::VARCHAR AS received, _context, _properties,
             count, big::VARCHAR AS big, huge::VARCHAR AS huge, ratio, tiny, flag, text, nested, list FROM events ORDER BY count`,
        );
        const comparable = (rows: typeof appended) => rows.map(({ received: _received, ...rest }) => rest);
        expect(comparable(appended)).toEqual(comparable(staged));
      } finally {
        await other.cleanup();
      }
      expect(appended[0]).toMatchObject({ _uid: 'u1', _sid: 's1', at: String(Date.parse('2026-03-01T12:34:56.789Z')), count: '1', big: '9007199254740993', huge: '-170141183460469231731687303715884105728', flag: true });
      expect(json(appended[0]!.nested)).toEqual({ a: [1, { b: null }], c: 'd' });
      expect(json(appended[1]!._properties)).toMatchObject({ count: 2, ratio: 1e21, nothing: null });
    });

    it('leaves a column the batch does not touch NULL, and gives a column added by hand its default', async () => {
      expect(allOk(await fx.write([event('a', { early: 'x', other: 1 })], live))).toBe(true);
      await fx.writer.close();
      const { DuckDBInstance } = await import('@duckdb/node-api');
      const db = await DuckDBInstance.create(fx.file);
      const conn = await db.connect();
      await conn.run(`ALTER TABLE events ADD COLUMN origin VARCHAR DEFAULT 'relay'`);
      conn.closeSync();
      db.closeSync();
      const reopened = await openFixture({}, fx.dataDir);
      try {
        expect(allOk(await reopened.write([event('b', { other: 2 })], live))).toBe(true);
        expect(await reopened.rows('SELECT _event, early, other, origin FROM events ORDER BY _event')).toEqual([
          { _event: 'a', early: 'x', other: '1', origin: 'relay' },
          { _event: 'b', early: null, other: '2', origin: 'relay' },
        ]);
      } finally {
        await reopened.writer.close();
      }
    });

    it('fails only the record whose value its column refuses, and writes the others once', async () => {
      const good = event('view', { n: 1 });
      const bad = event('view', { n: 2 }, { eventAt: 'not a time' });
      const outcomes = await fx.write([good, bad, event('view', { n: 3 })], live);
      expect(outcomes.map((o) => o.status)).toEqual(['ok', 'failed', 'ok']);
      expect(outcomes[1]!.status === 'failed' && outcomes[1]!.error.message).toMatch(/refused this record: Conversion Error/);
      expect(await fx.rows('SELECT n FROM events ORDER BY n')).toEqual([{ n: '1' }, { n: '3' }]);
    });
  });
});

