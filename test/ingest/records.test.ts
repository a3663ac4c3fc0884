import { startTestApi, type TestApi } from '../helpers/api';
import { base64Json, storedRecord, type ErrorAnswer } from '../helpers/records';

let api: TestApi;
let nyToken: string;
let contextToken: string;
beforeAll(async () => {
  api = await startTestApi();
  nyToken = (await api.addTracker({ timeZone: 'America/New_York' })).token;
  contextToken = (await api.addTracker({ captureContext: true })).token;
});
afterAll(async () => api.close());

const post = (path: string, body: unknown, token = api.token) => api.http.post(path).set('Authorization', `Tracker ${token}`).send(body as object);

async function expectRefused(res: { status: number; body: unknown }, code: string, field?: string): Promise<void> {
  expect(res.status).toBe(400);
  expect((res.body as ErrorAnswer).error).toMatchObject({ code, ...(field !== undefined ? { field } : {}) });
}

describe('_uid and _sid', () => {
  test('JSON numbers are stored as their decimal string', async () => {
    const res = await post('/v3/session', { _sid: 42, _uid: -7 });
    expect(res.status).toBe(202);
    expect(await storedRecord(api, res.body.id)).toMatchObject({ sid: '42', uid: '-7' });
    const res2 = await post('/v3/user', { _uid: 3.25 });
    expect(await storedRecord(api, res2.body.id)).toMatchObject({ uid: '3.25' });
  });

  test('integers past 2^53 keep their exact digits', async () => {
    const res = await api.http.post('/v3/session').set('Content-Type', 'application/json').send(`{"_token":"${api.token}","_sid":603851970716743426,"_uid":-12345678901234567890}`);
    expect(res.status).toBe(202);
    expect(await storedRecord(api, res.body.id)).toMatchObject({ sid: '603851970716743426', uid: '-12345678901234567890' });
  });

  test.each([
    ['an empty string', ''],
    ['an object', { id: 1 }],
    ['an array', ['u1']],
    ['true', true],
    ['false', false],
    ['a number with no plain decimal form', 1e21],
  ])('%s is a 400', async (_label, value) => {
    await expectRefused(await post('/v3/user', { _uid: value }), 'ERR_INVALID_FIELD', '_uid');
    await expectRefused(await post('/v3/session', { _sid: value }), 'ERR_INVALID_FIELD', '_sid');
    await expectRefused(await post('/v3/event', { _event: 'x', _uid: value }), 'ERR_INVALID_FIELD', '_uid');
  });

  test('a repeated GET parameter is an array, so a 400', async () => {
    await expectRefused(await api.http.get(`/v3/user?_token=${api.token}&_uid=a&_uid=b`), 'ERR_INVALID_FIELD', '_uid');
  });

  test('_uid is required on a user and _sid on a session; both are optional on an event', async () => {
    await expectRefused(await post('/v3/user', { plan: 'pro' }), 'ERR_MISSING_FIELD', '_uid');
    await expectRefused(await post('/v3/session', { _uid: 'u' }), 'ERR_MISSING_FIELD', '_sid');
    await expectRefused(await post('/v3/user', { _uid: null }), 'ERR_MISSING_FIELD', '_uid');
    const res = await post('/v3/event', { _event: 'anon', _uid: null });
    expect(res.status).toBe(202);
    const record = await storedRecord(api, res.body.id);
    expect(record.uid).toBeUndefined();
    expect(record.sid).toBeUndefined();
  });
});

describe('_event', () => {
  test('is required on an event', async () => {
    await expectRefused(await post('/v3/event', { page: '/' }), 'ERR_MISSING_FIELD', '_event');
    await expectRefused(await api.http.get(`/v3/event?_token=${api.token}&page=x`), 'ERR_MISSING_FIELD', '_event');
  });
  test.each([
    ['empty', ''],
    ['a number', 5],
    ['null', null],
    ['an object', { name: 'x' }],
  ])('%s is a 400', async (_label, value) => {
    await expectRefused(await post('/v3/event', { _event: value }), 'ERR_INVALID_FIELD', '_event');
  });
});

describe('_event_at', () => {
  test.each([
    ['local time in the tracker zone (winter, EST)', '2026-01-15T09:30:00', '2026-01-15T14:30:00.000Z'],
    ['local time in the tracker zone (summer, EDT)', '2026-07-04T12:00:00', '2026-07-04T16:00:00.000Z'],
    ['a local time in the spring-forward gap moves forward by the gap', '2026-03-08T02:30:00', '2026-03-08T07:30:00.000Z'],
    ['an ambiguous fall-back time takes the earlier offset', '2026-11-01T01:30:00', '2026-11-01T05:30:00.000Z'],
    ['Z ignores the tracker zone', '2026-07-04T12:00:00Z', '2026-07-04T12:00:00.000Z'],
    ['an offset ignores the tracker zone', '2026-07-04T12:00:00+02:00', '2026-07-04T10:00:00.000Z'],
    ['a compact offset', '2026-07-04T12:00:00-0530', '2026-07-04T17:30:00.000Z'],
    ['fractional seconds (kept to the millisecond)', '2026-07-04T12:00:00.123456Z', '2026-07-04T12:00:00.123Z'],
    ['fractional seconds in the tracker zone', '2026-01-15T09:30:00.5', '2026-01-15T14:30:00.500Z'],
  ])('%s', async (_label, input, expected) => {
    const res = await post('/v3/event', { _event: 'x', _event_at: input }, nyToken);
    expect(res.status).toBe(202);
    expect((await storedRecord(api, res.body.id)).eventAt).toBe(expected);
  });

  test('without a zone on the tracker, local times are UTC', async () => {
    const res = await post('/v3/event', { _event: 'x', _event_at: '2026-01-15T09:30:00' });
    expect((await storedRecord(api, res.body.id)).eventAt).toBe('2026-01-15T09:30:00.000Z');
  });

  test('by GET too, where an unencoded + of an offset arrives as a space', async () => {
    const res = await api.http.get(`/v3/event?_token=${nyToken}&_event=x&_event_at=2026-01-15T09:30:00`);
    expect((await storedRecord(api, res.body.id)).eventAt).toBe('2026-01-15T14:30:00.000Z');
    const plus = await api.http.get(`/v3/event?_token=${nyToken}&_event=x&_event_at=2026-01-15T09:30:00+02:00`);
    expect((await storedRecord(api, plus.body.id)).eventAt).toBe('2026-01-15T07:30:00.000Z');
  });

  test('absent or empty: the receive time', async () => {
    for (const body of [{ _event: 'x' }, { _event: 'x', _event_at: '' }, { _event: 'x', _event_at: null }]) {
      const res = await post('/v3/event', body);
      const record = await storedRecord(api, res.body.id);
      expect(record.eventAt).toBe(record.receivedAt);
    }
  });

  test.each([
    ['2026-02-30T10:00:00'],
    ['2025-02-29T10:00:00'],
    ['2026-13-01T00:00:00'],
    ['2026-01-01T24:00:00'],
    ['2026-01-01T23:59:60'],
    ['2026-01-01T10:00:00+25:00'],
    ['2026-01-01'],
    ['yesterday'],
    ['1700000000'],
    ['2026-W01-1T10:00:00'],
  ])('%s is a 400', async (input) => {
    await expectRefused(await post('/v3/event', { _event: 'x', _event_at: input }, nyToken), 'ERR_INVALID_FIELD', '_event_at');
  });

  test('a number is a 400', async () => {
    await expectRefused(await post('/v3/event', { _event: 'x', _event_at: 1_700_000_000 }), 'ERR_INVALID_FIELD', '_event_at');
  });
});

describe('reserved names', () => {
  test.each([
    ['event', { _event: 'x', _custom: 1 }, '_custom'],
    ['event', { _event: 'x', _received_at: '2026-01-01T00:00:00Z' }, '_received_at'],
    ['user', { _uid: 'u', _event: 'x' }, '_event'],
    ['user', { _uid: 'u', _sid: 's' }, '_sid'],
    ['session', { _sid: 's', _event_at: '2026-01-01T00:00:00' }, '_event_at'],
  ])('%s with %j is a 400 ERR_RESERVED_FIELD naming the field', async (kind, body, field) => {
    await expectRefused(await post(`/v3/${kind}`, body), 'ERR_RESERVED_FIELD', field);
  });

  test('by GET too', async () => {
    await expectRefused(await api.http.get(`/v3/event?_token=${api.token}&_event=x&_ref=abc`), 'ERR_RESERVED_FIELD', '_ref');
  });

  test('only top-level names are reserved; nested ones are data', async () => {
    const res = await post('/v3/event', { _event: 'x', meta: { _internal: 1, list: [{ _k: 2 }] } });
    expect(res.status).toBe(202);
    expect((await storedRecord(api, res.body.id)).properties).toEqual({ meta: { _internal: 1, list: [{ _k: 2 }] } });
  });
});

describe('ids and receive time', () => {
  const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

  test('every accepted record gets a UUIDv7 id, sortable in receive order, and _received_at', async () => {
    const before = Date.now();
    const res = await post('/v3/event', Array.from({ length: 20 }, (_, i) => ({ _event: 'x', i })));
    const after = Date.now();
    const ids = (res.body.results as Array<{ id: string }>).map((r) => r.id);
    for (const id of ids) expect(id).toMatch(UUID_V7);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    const next = (await post('/v3/event', { _event: 'later' })).body.id as string;
    expect(next > ids.at(-1)!).toBe(true);

    const record = await storedRecord(api, ids[0]!);
    expect(record.receivedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const at = Date.parse(record.receivedAt);
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(after);
  });
});

describe('request context', () => {
  test('captured when the tracker asks for it', async () => {
    const res = await api.http
      .post('/v3/event')
      .set('Authorization', `Tracker ${contextToken}`)
      .set('User-Agent', 'Mozilla/5.0 (test)')
      .set('Referer', 'https://shop.example/cart')
      .send({ _event: 'x' });
    expect((await storedRecord(api, res.body.id)).context).toEqual({ ip: expect.stringMatching(/127\.0\.0\.1|::1/), userAgent: 'Mozilla/5.0 (test)', referer: 'https://shop.example/cart' });
  });

  test('not captured otherwise', async () => {
    const res = await api.http.post('/v3/event').set('Authorization', `Tracker ${api.token}`).set('User-Agent', 'Mozilla/5.0 (test)').send({ _event: 'x' });
    expect((await storedRecord(api, res.body.id)).context).toBeUndefined();
  });
});

describe('free-form properties', () => {
  test('any JSON type, nested objects and arrays included, are stored as sent', async () => {
    const properties = { s: 'text', n: 12.5, neg: -3, zero: 0, t: true, f: false, nil: null, arr: [1, 'two', { three: [3] }], obj: { a: { b: { c: 'deep' } } }, unicode: 'ünï € 😀', empty: {}, none: [] };
    const res = await post('/v3/event', { _event: 'x', ...properties });
    expect((await storedRecord(api, res.body.id)).properties).toEqual(properties);
  });

  test('__proto__ and constructor nested anywhere are stored as data and pollute nothing', async () => {
    const body =
      '{"_event":"x","constructor":{"prototype":{"polluted":1}},"toString":"s","hasOwnProperty":2,' +
      '"nested":{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}}},"list":[{"__proto__":{"polluted":1}}]}';
    const res = await api.http.post('/v3/event').set('Authorization', `Tracker ${api.token}`).set('Content-Type', 'application/json').send(body);
    expect(res.status).toBe(202);
    const props = (await storedRecord(api, res.body.id)).properties as Record<string, unknown>;
    expect(JSON.stringify(props)).toBe(JSON.stringify(JSON.parse(body.replace('"_event":"x",', ''))));
    expect(Object.getOwnPropertyNames(props.nested)).toEqual(['__proto__', 'constructor']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  });

  test('by GET and data= as well', async () => {
    const res = await api.http.get(`/v3/event?_token=${api.token}&_event=x&constructor=a&toString=b&hasOwnProperty=c&valueOf=d`);
    expect(res.status).toBe(202);
    expect({ ...(await storedRecord(api, res.body.id)).properties }).toEqual({ constructor: 'a', toString: 'b', hasOwnProperty: 'c', valueOf: 'd' });
    const data = base64Json(JSON.parse('{"_event":"x","o":{"__proto__":{"polluted":1}}}'), { urlSafe: true });
    const res2 = await api.http.get(`/v3/event?_token=${api.token}&data=${data}`);
    expect(JSON.stringify((await storedRecord(api, res2.body.id)).properties)).toBe('{"o":{"__proto__":{"polluted":1}}}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test('names with two leading underscores (__proto__, __typename) are ordinary data at the top level too', async () => {
    const res = await api.http.post('/v3/event').set('Authorization', `Tracker ${api.token}`).set('Content-Type', 'application/json').send('{"_event":"x","__proto__":{"polluted":1},"__typename":"Order"}');
    expect(res.status).toBe(202);
    expect(JSON.stringify((await storedRecord(api, res.body.id)).properties)).toBe('{"__proto__":{"polluted":1},"__typename":"Order"}');
    const get = await api.http.get(`/v3/event?_token=${api.token}&_event=x&__proto__=1`);
    expect(get.status).toBe(202);
    expect(JSON.stringify((await storedRecord(api, get.body.id)).properties)).toBe('{"__proto__":"1"}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
