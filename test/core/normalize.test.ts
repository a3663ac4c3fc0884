import type { Limits } from '../../src/core/config';
import { normalizeRecord, type NormalizeInput } from '../../src/core/records/normalize';

const limits: Limits = { requestBytes: 1e6, headerBytes: 65_536, decodedBytes: 1e6, recordsPerRequest: 10, propertiesPerRecord: 3, keyLength: 8, valueLength: 10, idLength: 12, depth: 2 };
const receivedAt = '2026-11-22T10:00:00.000Z';

function run(kind: NormalizeInput['kind'], raw: Record<string, unknown>, extra: Partial<NormalizeInput> = {}) {
  return normalizeRecord({ kind, raw, id: 'id-1', receivedAt, timeZone: 'UTC', limits, ...extra });
}
function errorOf(kind: NormalizeInput['kind'], raw: Record<string, unknown>) {
  const r = run(kind, raw);
  if (r.ok) throw new Error('expected a refusal');
  return r.error;
}

describe('the queued shape', () => {
  test('an event', () => {
    expect(run('event', { _event: 'view', _uid: 'u', _sid: 's', _event_at: '2026-01-01T00:00:00Z', page: '/' })).toEqual({
      ok: true,
      record: { kind: 'event', id: 'id-1', receivedAt, uid: 'u', sid: 's', event: 'view', eventAt: '2026-01-01T00:00:00.000Z', properties: { page: '/' } },
      keyed: false,
      bigInts: false,
    });
  });
  test('a client key: the record’s own _id, else the request’s Idempotency-Key, else the server id', () => {
    expect(run('event', { _event: 'x', _id: 'order-42' })).toMatchObject({ ok: true, keyed: true, record: { id: 'order-42', properties: {} } });
    const withHeader = normalizeRecord({ kind: 'user', raw: { _uid: 'u' }, id: 'id-1', idempotencyKey: 'req-7:0', receivedAt, timeZone: 'UTC', limits });
    expect(withHeader).toMatchObject({ ok: true, keyed: true, record: { id: 'req-7:0' } });
    const both = normalizeRecord({ kind: 'user', raw: { _uid: 'u', _id: 'own' }, id: 'id-1', idempotencyKey: 'req-7:0', receivedAt, timeZone: 'UTC', limits });
    expect(both).toMatchObject({ ok: true, keyed: true, record: { id: 'own' } });
    expect(run('event', { _event: 'x', _id: null })).toMatchObject({ ok: true, keyed: false, record: { id: 'id-1' } });
    expect(run('event', { _event: 'x', _id: '~'.repeat(128) })).toMatchObject({ ok: true, record: { id: '~'.repeat(128) } });
    for (const bad of ['a b', '', 'x'.repeat(129), 'tab\there', 'ü', 7, {}]) {
      expect(run('event', { _event: 'x', _id: bad })).toMatchObject({ ok: false, error: { code: 'ERR_INVALID_FIELD', field: '_id' } });
    }
  });
  test('a user and a session carry no event fields', () => {
    const user = run('user', { _uid: 'u', a: 1 });
    expect(user.ok && user.record).toEqual({ kind: 'user', id: 'id-1', receivedAt, uid: 'u', properties: { a: 1 } });
    const session = run('session', { _sid: 's' });
    expect(session.ok && session.record).toEqual({ kind: 'session', id: 'id-1', receivedAt, sid: 's', properties: {} });
  });
  test('the event time defaults to the receive time', () => {
    const r = run('event', { _event: 'x' });
    expect(r.ok && r.record.eventAt).toBe(receivedAt);
  });
  test('the tracker zone applies to a local _event_at', () => {
    const r = run('event', { _event: 'x', _event_at: '2026-01-15T09:30:00' }, { timeZone: 'America/New_York' });
    expect(r.ok && r.record.eventAt).toBe('2026-01-15T14:30:00.000Z');
  });
  test('context is attached only when given', () => {
    const ctx = { ip: '10.0.0.1', userAgent: 'ua' };
    const withCtx = run('event', { _event: 'x' }, { context: ctx });
    expect(withCtx.ok && withCtx.record.context).toEqual(ctx);
    const without = run('event', { _event: 'x' });
    expect(without.ok && 'context' in without.record).toBe(false);
  });
  test('properties are a null-prototype object, so any name is data', () => {
    const raw = JSON.parse('{"_event":"x","constructor":1,"nested":{"__proto__":{"polluted":1}}}') as Record<string, unknown>;
    const r = run('event', raw, { limits: { ...limits, keyLength: 16 } });
    if (!r.ok) throw new Error(r.error.message);
    expect(Object.getPrototypeOf(r.record.properties)).toBeNull();
    expect(r.record.properties.constructor).toBe(1);
    expect(JSON.stringify(r.record.properties)).toBe('{"constructor":1,"nested":{"__proto__":{"polluted":1}}}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('_uid and _sid', () => {
  test.each([
    [42, '42'],
    [-7, '-7'],
    [0, '0'],
    [3.25, '3.25'],
    [Number.MAX_SAFE_INTEGER, '9007199254740991'],
  ])('the number %p is stored as %p', (input, expected) => {
    const r = run('user', { _uid: input });
    expect(r.ok && r.record.uid).toBe(expected);
  });
  test.each([[''], [{}], [[]], [true], [false], [2 ** 53 + 2], [1e21], [1e-7], [Infinity], [NaN]])('%p is ERR_INVALID_FIELD', (value) => {
    expect(errorOf('session', { _sid: value })).toMatchObject({ code: 'ERR_INVALID_FIELD', field: '_sid' });
  });
  test('null is absent', () => {
    expect(errorOf('user', { _uid: null })).toMatchObject({ code: 'ERR_MISSING_FIELD', field: '_uid' });
    const r = run('event', { _event: 'x', _uid: null, _sid: null });
    expect(r.ok && [r.record.uid, r.record.sid]).toEqual([undefined, undefined]);
  });
  test('longer than idLength is ERR_VALUE_TOO_LONG', () => {
    expect(run('user', { _uid: 'u'.repeat(12) }).ok).toBe(true);
    expect(errorOf('user', { _uid: 'u'.repeat(13) })).toMatchObject({ code: 'ERR_VALUE_TOO_LONG', field: '_uid' });
  });
});

describe('_event', () => {
  test('required, a non-empty string within idLength', () => {
    expect(errorOf('event', {})).toMatchObject({ code: 'ERR_MISSING_FIELD', field: '_event' });
    expect(errorOf('event', { _event: '' })).toMatchObject({ code: 'ERR_INVALID_FIELD', field: '_event' });
    expect(errorOf('event', { _event: ['a'] })).toMatchObject({ code: 'ERR_INVALID_FIELD', field: '_event' });
    expect(errorOf('event', { _event: 'e'.repeat(13) })).toMatchObject({ code: 'ERR_VALUE_TOO_LONG', field: '_event' });
  });
  test('an unreadable _event_at is ERR_INVALID_FIELD', () => {
    expect(errorOf('event', { _event: 'x', _event_at: '2026-02-30T00:00:00' })).toMatchObject({ code: 'ERR_INVALID_FIELD', field: '_event_at' });
    expect(errorOf('event', { _event: 'x', _event_at: 5 })).toMatchObject({ code: 'ERR_INVALID_FIELD', field: '_event_at' });
  });
});

describe('reserved names', () => {
  test.each([
    ['event', '_foo'],
    ['event', '_token'],
    ['user', '_sid'],
    ['user', '_event'],
    ['session', '_event'],
    ['session', '_event_at'],
  ] as const)('%s refuses %s', (kind, name) => {
    const base = { event: { _event: 'x' }, user: { _uid: 'u' }, session: { _sid: 's' } }[kind];
    const raw: Record<string, unknown> = Object.assign(Object.create(null) as Record<string, unknown>, base);
    raw[name] = 1;
    expect(errorOf(kind, raw)).toMatchObject({ code: 'ERR_RESERVED_FIELD', field: name });
  });
});

describe('limits', () => {
  test('properties per record: reserved names do not count', () => {
    expect(run('event', { _event: 'x', _uid: 'u', a: 1, b: 2, c: 3 }).ok).toBe(true);
    expect(errorOf('event', { _event: 'x', a: 1, b: 2, c: 3, d: 4 })).toMatchObject({ code: 'ERR_TOO_MANY_PROPERTIES' });
  });
  test('key length at the top and nested', () => {
    expect(run('event', { _event: 'x', kkkkkkkk: { nnnnnnnn: 1 } }).ok).toBe(true);
    expect(errorOf('event', { _event: 'x', kkkkkkkkk: 1 })).toMatchObject({ code: 'ERR_KEY_TOO_LONG', field: 'kkkkkkkkk' });
    expect(errorOf('event', { _event: 'x', o: { nnnnnnnnn: 1 } })).toMatchObject({ code: 'ERR_KEY_TOO_LONG', field: 'o.nnnnnnnnn' });
  });
  test('value length applies to strings at any depth, and only to strings', () => {
    expect(run('event', { _event: 'x', s: 'v'.repeat(10), n: 12345678901234, a: ['v'.repeat(10)] }).ok).toBe(true);
    expect(errorOf('event', { _event: 'x', s: 'v'.repeat(11) })).toMatchObject({ code: 'ERR_VALUE_TOO_LONG', field: 's' });
    expect(errorOf('event', { _event: 'x', o: { a: ['ok', 'v'.repeat(11)] } })).toMatchObject({ code: 'ERR_VALUE_TOO_LONG', field: 'o.a[1]' });
  });
  test('depth counts nested objects and arrays inside a property value', () => {
    expect(run('event', { _event: 'x', o: { a: [1] } }).ok).toBe(true);
    expect(errorOf('event', { _event: 'x', o: { a: [[1]] } })).toMatchObject({ code: 'ERR_TOO_DEEP', field: 'o.a[0]' });
    expect(errorOf('event', { _event: 'x', a: [[[]]] })).toMatchObject({ code: 'ERR_TOO_DEEP', field: 'a[0][0]' });
  });
});

describe('integers beyond 2^53', () => {
  test('are kept as bigints, reported by bigInts at any depth, and kept as _uid/_sid digits', () => {
    expect(run('event', { _event: 'x', a: { b: [1n << 60n] } })).toMatchObject({ ok: true, bigInts: true, record: { properties: { a: { b: [1n << 60n] } } } });
    expect(run('event', { _event: 'x', n: -(1n << 70n) })).toMatchObject({ ok: true, bigInts: true });
    expect(run('event', { _event: 'x', n: 1 })).toMatchObject({ ok: true, bigInts: false });
    expect(run('session', { _sid: 603851970716743426n, _uid: -12345678901234567890n }, { limits: { ...limits, idLength: 64 } })).toMatchObject({ ok: true, bigInts: false, record: { sid: '603851970716743426', uid: '-12345678901234567890' } });
  });
});
