import { Readable } from 'node:stream';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { startTestApi, type TestApi } from '../helpers/api';
import { json, listen, type Listening } from '../helpers/raw-http';
import { base64Json, storedRecord, type ErrorAnswer } from '../helpers/records';

let api: TestApi;
let raw: Listening;
let auth: string;
beforeAll(async () => {
  api = await startTestApi();
  raw = await listen(api.runtime.app);
  auth = `Tracker ${api.token}`;
});
afterAll(async () => {
  await raw.close();
  await api.close();
});

const event = { _event: 'signup', plan: 'pro', price: 9.9, tags: ['a', 'b'], nested: { ok: true, none: null } };
/** supertest JSON-serializes a Buffer sent as JSON, so byte-exact bodies go through node:http. */
const postBytes = (body: Buffer, headers: Record<string, string>) => raw.request({ method: 'POST', path: '/v3/event', headers: { authorization: auth, ...headers }, body });

const stored = { kind: 'event', event: 'signup', properties: { plan: 'pro', price: 9.9, tags: ['a', 'b'], nested: { ok: true, none: null } } };

describe('POST bodies', () => {
  test('application/json answers 202 {accepted:1,id} and stores the record', async () => {
    const res = await api.http.post('/v3/event').set('Authorization', auth).send(event);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ accepted: 1, id: expect.any(String) });
    expect(await storedRecord(api, res.body.id)).toMatchObject({ ...stored, trackerId: api.tracker.id });
  });

  test.each([
    ['gzip', gzipSync],
    ['x-gzip', gzipSync],
    ['deflate', deflateSync],
    ['br', brotliCompressSync],
    ['GZIP, identity', gzipSync],
  ])('Content-Encoding: %s is decoded', async (encoding, compress) => {
    const body = compress(Buffer.from(JSON.stringify(event)));
    const res = await postBytes(body, { 'content-type': 'application/json', 'content-encoding': encoding });
    expect(res.status).toBe(202);
    expect(await storedRecord(api, (json(res) as { id: string }).id)).toMatchObject(stored);
  });

  test('a gzip body labelled deflate still decodes (the decoder sniffs the header)', async () => {
    const res = await postBytes(gzipSync(JSON.stringify(event)), { 'content-type': 'application/json', 'content-encoding': 'deflate' });
    expect(res.status).toBe(202);
  });

  test('a chunked gzip body without Content-Length is decoded', async () => {
    const res = await raw.request({
      method: 'POST',
      path: `/v3/event?_token=${api.token}`,
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: Readable.from([gzipSync(JSON.stringify(event))]),
    });
    expect(res.status).toBe(202);
    expect(await storedRecord(api, (json(res) as { id: string }).id)).toMatchObject(stored);
  });

  test('text/plain holding JSON (navigator.sendBeacon with a string)', async () => {
    const res = await api.http.post('/v3/event').set('Content-Type', 'text/plain;charset=UTF-8').send(JSON.stringify({ ...event, _token: api.token }));
    expect(res.status).toBe(202);
    expect(await storedRecord(api, res.body.id)).toMatchObject(stored);
  });

  test('application/*+json is JSON', async () => {
    const res = await api.http.post('/v3/event').set('Authorization', auth).set('Content-Type', 'application/vnd.api+json').send(JSON.stringify(event));
    expect(res.status).toBe(202);
  });

  test('no Content-Type at all (sendBeacon with an untyped Blob) is read as JSON', async () => {
    const res = await raw.request({ method: 'POST', path: '/v3/event', headers: { authorization: auth }, body: Buffer.from(JSON.stringify(event)) });
    expect(res.headers['content-type']).toMatch(/application\/json/);
    expect(res.status).toBe(202);
    expect(await storedRecord(api, (json(res) as { id: string }).id)).toMatchObject(stored);
  });

  test('a UTF-8 byte-order mark is skipped', async () => {
    const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(event))]);
    const res = await postBytes(body, { 'content-type': 'application/json' });
    expect(res.status).toBe(202);
  });

  test('application/x-www-form-urlencoded: every field a string, a repeated name an array of strings', async () => {
    const res = await api.http
      .post('/v3/event')
      .type('form')
      .send(`_token=${api.token}&_event=order&total=42.50&paid=true&item=a&item=b&note=hello+world%21&a%5Bb%5D=1&empty=`);
    expect(res.status).toBe(202);
    const record = await storedRecord(api, res.body.id);
    expect(record).toMatchObject({ event: 'order', properties: { total: '42.50', paid: 'true', item: ['a', 'b'], note: 'hello world!', 'a[b]': '1', empty: '' } });
    expect(record.properties).not.toHaveProperty('_token');
  });

  test('a form field named data is an ordinary property, not an encoded payload', async () => {
    const res = await api.http.post('/v3/event').set('Authorization', auth).type('form').send('_event=x&data=eyJhIjoxfQ');
    expect(res.status).toBe(202);
    expect((await storedRecord(api, res.body.id)).properties).toEqual({ data: 'eyJhIjoxfQ' });
  });

  test('an empty POST body takes the record from the URL', async () => {
    const res = await api.http.post(`/v3/event?_token=${api.token}&_event=ping&source=url`);
    expect(res.status).toBe(202);
    expect(await storedRecord(api, res.body.id)).toMatchObject({ event: 'ping', properties: { source: 'url' } });
  });
});

describe('arrays of records', () => {
  test('each record is answered on its own; one bad record does not reject its neighbours', async () => {
    const res = await api.http
      .post('/v3/event')
      .set('Authorization', auth)
      .send([{ _event: 'a', n: 1 }, { n: 2 }, 5, { _event: 'b', _oops: 1 }, { _event: 'c', n: 3 }]);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      accepted: 2,
      rejected: 3,
      results: [
        { id: expect.any(String) },
        { error: { code: 'ERR_MISSING_FIELD', field: '_event', message: expect.any(String) } },
        { error: { code: 'ERR_INVALID_PAYLOAD', message: expect.any(String) } },
        { error: { code: 'ERR_RESERVED_FIELD', field: '_oops', message: expect.any(String) } },
        { id: expect.any(String) },
      ],
    });
    const [first, , , , last] = res.body.results as Array<{ id: string }>;
    expect(await storedRecord(api, first!.id)).toMatchObject({ event: 'a', properties: { n: 1 } });
    expect(await storedRecord(api, last!.id)).toMatchObject({ event: 'c', properties: { n: 3 } });
  });

  test('a batch with no valid record is a 400 ERR_NO_VALID_RECORDS that still lists each result', async () => {
    const res = await api.http.post('/v3/event').set('Authorization', auth).send([{ n: 1 }, 'x']);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: { code: 'ERR_NO_VALID_RECORDS' }, accepted: 0, rejected: 2, results: [{ error: { code: 'ERR_MISSING_FIELD' } }, { error: { code: 'ERR_INVALID_PAYLOAD' } }] });
  });

  test('an array of one is still a batch', async () => {
    const res = await api.http.post('/v3/event').set('Authorization', auth).send([{ _event: 'solo' }]);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ accepted: 1, rejected: 0, results: [{ id: expect.any(String) }] });
  });

  test('an empty array is a 400 ERR_EMPTY_BATCH', async () => {
    const res = await api.http.post('/v3/event').set('Authorization', auth).send([]);
    expect(res.status).toBe(400);
    expect((res.body as ErrorAnswer).error.code).toBe('ERR_EMPTY_BATCH');
  });

  test('URL parameters are the base of every record of the array', async () => {
    const res = await api.http.post(`/v3/event?_event=import&source=csv`).set('Authorization', auth).send([{ row: 1 }, { row: 2, _event: 'special' }]);
    expect(res.status).toBe(202);
    const [a, b] = res.body.results as Array<{ id: string }>;
    expect(await storedRecord(api, a!.id)).toMatchObject({ event: 'import', properties: { source: 'csv', row: 1 } });
    expect(await storedRecord(api, b!.id)).toMatchObject({ event: 'special', properties: { source: 'csv', row: 2 } });
  });
});

describe('GET', () => {
  test('individual parameters arrive as strings; a repeated name is an array of strings', async () => {
    const res = await api.http.get(`/v3/event?_token=${api.token}&_event=view&price=9.90&count=3&flag=true&tag=a&tag=b&q=a+b%26c&empty=`);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ accepted: 1, id: expect.any(String) });
    expect((await storedRecord(api, res.body.id)).properties).toEqual({ price: '9.90', count: '3', flag: 'true', tag: ['a', 'b'], q: 'a b&c', empty: '' });
  });

  const payload = { _event: 'view', note: '?>~ü€ÿé?>~ü€ÿ1', n: 1 };
  const std = base64Json(payload);
  test('the chosen payload exercises +, / and padding', () => {
    expect(std).toMatch(/\+/);
    expect(std).toMatch(/\//);
    expect(std).toMatch(/=$/);
  });

  test.each([
    ['standard, padded, URL-encoded', encodeURIComponent(base64Json(payload))],
    ['standard, unpadded', encodeURIComponent(base64Json(payload, { pad: false }))],
    ['URL-safe, padded', base64Json(payload, { urlSafe: true })],
    ['URL-safe, unpadded', base64Json(payload, { urlSafe: true, pad: false })],
    ['standard, sent raw so + reads as a space', base64Json(payload)],
    ['standard, + already turned into a space', base64Json(payload).replace(/\+/g, '%20')],
  ])('data= in %s form', async (_label, data) => {
    const res = await api.http.get(`/v3/event?_token=${api.token}&data=${data}`);
    expect(res.status).toBe(202);
    expect(await storedRecord(api, res.body.id)).toMatchObject({ event: 'view', properties: { note: payload.note, n: 1 } });
  });

  test('data= holding an array is a batch', async () => {
    const res = await api.http.get(`/v3/event?_token=${api.token}&data=${base64Json([{ _event: 'a' }, { _event: 'b' }], { urlSafe: true })}`);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ accepted: 2, rejected: 0 });
  });

  test('data= given twice is a 400', async () => {
    const d = base64Json({ _event: 'a' }, { urlSafe: true });
    const res = await api.http.get(`/v3/event?_token=${api.token}&data=${d}&data=${d}`);
    expect(res.status).toBe(400);
    expect((res.body as ErrorAnswer).error).toMatchObject({ code: 'ERR_INVALID_FIELD', field: 'data' });
  });
});

describe('mixing rule: URL parameters are the base, the encoded payload overlays them', () => {
  test('data= overlays the other URL parameters', async () => {
    const res = await api.http.get(`/v3/event?_token=${api.token}&_event=base&keep=url&both=url&data=${base64Json({ _event: 'top', both: 'data', extra: 2 }, { urlSafe: true })}`);
    expect(res.status).toBe(202);
    expect(await storedRecord(api, res.body.id)).toMatchObject({ event: 'top', properties: { keep: 'url', both: 'data', extra: 2 } });
  });

  test('a SaaS webhook: token and _event in the URL, its own JSON in the body', async () => {
    const res = await api.http.post(`/v3/event?_token=${api.token}&_event=stripe.webhook`).send({ id: 'evt_1', type: 'charge.succeeded', data: { object: { amount: 500 } } });
    expect(res.status).toBe(202);
    expect(await storedRecord(api, res.body.id)).toMatchObject({ event: 'stripe.webhook', properties: { id: 'evt_1', type: 'charge.succeeded', data: { object: { amount: 500 } } } });
  });

  test('the body wins over the URL for the same name', async () => {
    const res = await api.http.post(`/v3/event?_event=url&x=url`).set('Authorization', auth).send({ _event: 'body', x: 1 });
    expect(await storedRecord(api, res.body.id)).toMatchObject({ event: 'body', properties: { x: 1 } });
  });

  test('a form body overlays the URL too', async () => {
    const res = await api.http.post(`/v3/event?_event=hook&x=url&y=url`).set('Authorization', auth).type('form').send('x=form');
    expect(await storedRecord(api, res.body.id)).toMatchObject({ event: 'hook', properties: { x: 'form', y: 'url' } });
  });

  test('data= in the URL of a POST is part of the base; the body overlays it', async () => {
    const res = await api.http.post(`/v3/event?a=url&data=${base64Json({ _event: 'd', b: 'data', c: 'data' }, { urlSafe: true })}`).set('Authorization', auth).send({ c: 'body' });
    expect(await storedRecord(api, res.body.id)).toMatchObject({ event: 'd', properties: { a: 'url', b: 'data', c: 'body' } });
  });
});

describe('all three resources, by POST and GET', () => {
  const cases = [
    { kind: 'user', body: { _uid: 'u-1', email: 'a@example.com' }, expected: { kind: 'user', uid: 'u-1', properties: { email: 'a@example.com' } } },
    { kind: 'session', body: { _sid: 's-1', _uid: 'u-1', source: 'ads' }, expected: { kind: 'session', sid: 's-1', uid: 'u-1', properties: { source: 'ads' } } },
    { kind: 'event', body: { _event: 'view', _uid: 'u-1', _sid: 's-1', page: '/' }, expected: { kind: 'event', event: 'view', uid: 'u-1', sid: 's-1', properties: { page: '/' } } },
  ] as const;

  test.each(cases)('POST /v3/$kind', async ({ kind, body, expected }) => {
    const res = await api.http.post(`/v3/${kind}`).set('Authorization', auth).send(body);
    expect(res.status).toBe(202);
    expect(await storedRecord(api, res.body.id)).toMatchObject(expected);
  });

  test.each(cases)('GET /v3/$kind', async ({ kind, body, expected }) => {
    const query = new URLSearchParams({ ...body, _token: api.token }).toString();
    const res = await api.http.get(`/v3/${kind}?${query}`);
    expect(res.status).toBe(202);
    expect(await storedRecord(api, res.body.id)).toMatchObject(expected);
  });

  test.each(cases)('GET /v3/$kind?data=', async ({ kind, body, expected }) => {
    const res = await api.http.get(`/v3/${kind}?_token=${api.token}&data=${base64Json(body, { urlSafe: true, pad: false })}`);
    expect(res.status).toBe(202);
    expect(await storedRecord(api, res.body.id)).toMatchObject(expected);
  });
});
