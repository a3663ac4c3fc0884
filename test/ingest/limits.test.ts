import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { gunzipSync, gzipSync } from 'node:zlib';
import { startTestApi, type TestApi } from '../helpers/api';
import { json, listen, type Listening, type RawResponse } from '../helpers/raw-http';
import { base64Json, storedCount, type ErrorAnswer } from '../helpers/records';

const LIMITS = {
  LIMIT_REQUEST_BYTES: '4096',
  LIMIT_DECODED_BYTES: '16384',
  LIMIT_RECORDS_PER_REQUEST: '3',
  LIMIT_PROPERTIES_PER_RECORD: '5',
  LIMIT_KEY_LENGTH: '16',
  LIMIT_VALUE_LENGTH: '32',
  LIMIT_ID_LENGTH: '20',
  LIMIT_DEPTH: '3',
};

let api: TestApi;
let raw: Listening;
beforeAll(async () => {
  api = await startTestApi(LIMITS);
  raw = await listen(api.runtime.app);
});
afterAll(async () => {
  await raw.close();
  await api.close();
});

const post = (body: unknown, path = '/v3/event') => api.http.post(path).set('Authorization', `Tracker ${api.token}`).send(body as object);
const postRaw = (body: Buffer | Readable, headers: Record<string, string> = {}) =>
  raw.request({ method: 'POST', path: '/v3/event', headers: { authorization: `Tracker ${api.token}`, 'content-type': 'application/json', ...headers }, body });

function expectError(res: RawResponse | { status: number; body: unknown }, status: number, code: string, field?: string): void {
  expect(res.status).toBe(status);
  const body = (Buffer.isBuffer(res.body) ? json(res as RawResponse) : res.body) as ErrorAnswer;
  expect(body.error).toMatchObject({ code, ...(field !== undefined ? { field } : {}) });
}

/** `{"_event":"x"}` followed by JSON whitespace, `size` bytes in all. */
const paddedJson = (size: number) => {
  const text = JSON.stringify({ _event: 'x' });
  return Buffer.from(text + ' '.repeat(size - text.length));
};

test('the configured limits are the ones in force', () => {
  expect(api.config.limits).toEqual({ requestBytes: 4096, headerBytes: 65_536, decodedBytes: 16384, recordsPerRequest: 3, propertiesPerRecord: 5, keyLength: 16, valueLength: 32, idLength: 20, depth: 3 });
});

describe('request bytes', () => {
  test('at the limit is accepted; one byte over is a 413 before the body is read', async () => {
    expect((await postRaw(paddedJson(4096))).status).toBe(202);
    expectError(await postRaw(paddedJson(4097)), 413, 'ERR_PAYLOAD_TOO_LARGE');
  });

  test('a chunked body (no Content-Length) is counted as it arrives', async () => {
    const chunks = Array.from({ length: 8 }, (_, i) => Buffer.from(i === 0 ? '{"_event":"x"' + ' '.repeat(987) : ' '.repeat(1000)));
    const res = await postRaw(Readable.from(chunks));
    expectError(res, 413, 'ERR_PAYLOAD_TOO_LARGE');
    expect(res.headers.connection).toBe('close');
  });

  test('compressed bytes count against it, before decoding', async () => {
    const incompressible = gzipSync(JSON.stringify({ _event: 'x', p: randomBytes(6000).toString('base64') }));
    expect(incompressible.length).toBeGreaterThan(4096);
    expectError(await postRaw(incompressible, { 'content-encoding': 'gzip' }), 413, 'ERR_PAYLOAD_TOO_LARGE');
  });
});

describe('decoded bytes', () => {
  test('at the limit is accepted; one byte over is a 413', async () => {
    const at = gzipSync(paddedJson(16384));
    const over = gzipSync(paddedJson(16385));
    expect(over.length).toBeLessThan(4096);
    expect((await postRaw(at, { 'content-encoding': 'gzip' })).status).toBe(202);
    const res = await postRaw(over, { 'content-encoding': 'gzip' });
    expectError(res, 413, 'ERR_PAYLOAD_TOO_LARGE');
    expect((json(res) as ErrorAnswer).error.message).toMatch(/decoded/);
  });

  test('an identity body is bounded by it as well', async () => {
    const small = await startTestApi({ LIMIT_REQUEST_BYTES: '100000', LIMIT_DECODED_BYTES: '1000' });
    try {
      const res = await small.http.post('/v3/event').set('Authorization', `Tracker ${small.token}`).set('Content-Type', 'application/json').send(paddedJson(1001).toString());
      expectError(res, 413, 'ERR_PAYLOAD_TOO_LARGE');
    } finally {
      await small.close();
    }
  });
});

describe('a gzip bomb, with the default limits', () => {
  let big: TestApi;
  let bigRaw: Listening;
  /** 1 MiB of zeros as one gzip member (about 1 KB). Members in a row decode to their sum. */
  const member = gzipSync(Buffer.alloc(1 << 20), { level: 9 });
  const members = (n: number) => Array.from({ length: n }, () => member);

  beforeAll(async () => {
    big = await startTestApi();
    bigRaw = await listen(big.runtime.app);
  });
  afterAll(async () => {
    await bigRaw.close();
    await big.close();
  });

  test('concatenated members decode to their sum', () => {
    expect(gunzipSync(Buffer.concat(members(3))).length).toBe(3 << 20);
  });

  test.each([
    // 1 GiB, streamed: there is no Content-Length to refuse it by, so decoding must stop it.
    ['1 GiB streamed (chunked)', () => Readable.from(members(1024))],
    // As many members as fit under the 1 MiB request limit (≈ 1 GB decoded), sent with a Content-Length.
    ['≈1 GB with a Content-Length under the request limit', () => Buffer.concat(members(Math.floor(big.config.limits.requestBytes / member.length)))],
  ])('%s: 413 on decoded bytes, without a memory spike, and nothing stored', async (_label, body) => {
    const payload = body();
    if (Buffer.isBuffer(payload)) {
      expect(payload.length).toBeLessThanOrEqual(big.config.limits.requestBytes);
      expect((payload.length / member.length) * (1 << 20)).toBeGreaterThan(1e9);
    }
    const rss0 = process.memoryUsage.rss();
    let peak = rss0;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 2);
    const res = await bigRaw.request({ method: 'POST', path: '/v3/event', headers: { authorization: `Tracker ${big.token}`, 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: payload });
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage.rss());
    if (payload instanceof Readable) payload.destroy();

    expectError(res, 413, 'ERR_PAYLOAD_TOO_LARGE');
    expect((json(res) as ErrorAnswer).error.message).toMatch(/decoded/);
    expect(peak - rss0).toBeLessThan(48 * 1024 * 1024);
    expect(await storedCount(big)).toBe(0);
  });
});

describe('records per request', () => {
  test('at the limit is accepted; over it is a 413 ERR_TOO_MANY_RECORDS, by POST and by data=', async () => {
    const records = (n: number) => Array.from({ length: n }, () => ({ _event: 'x' }));
    expect((await post(records(3))).status).toBe(202);
    expectError(await post(records(4)), 413, 'ERR_TOO_MANY_RECORDS');
    expectError(await api.http.get(`/v3/event?_token=${api.token}&data=${base64Json(records(4), { urlSafe: true })}`), 413, 'ERR_TOO_MANY_RECORDS');
  });
});

describe('properties per record', () => {
  const props = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, i]));
  test('reserved fields do not count; one over is a 400 ERR_TOO_MANY_PROPERTIES', async () => {
    expect((await post({ _event: 'x', _uid: 'u', _sid: 's', ...props(5) })).status).toBe(202);
    expectError(await post({ _event: 'x', ...props(6) }), 400, 'ERR_TOO_MANY_PROPERTIES');
  });
  test('by GET too', async () => {
    const query = Object.entries(props(6)).map(([k, v]) => `${k}=${v}`).join('&');
    expectError(await api.http.get(`/v3/event?_token=${api.token}&_event=x&${query}`), 400, 'ERR_TOO_MANY_PROPERTIES');
  });
});

describe('key length', () => {
  test('at the limit is accepted; over it is a 400 ERR_KEY_TOO_LONG naming the key, at any depth', async () => {
    expect((await post({ _event: 'x', ['k'.repeat(16)]: 1, o: { ['n'.repeat(16)]: 1 } })).status).toBe(202);
    expectError(await post({ _event: 'x', ['k'.repeat(17)]: 1 }), 400, 'ERR_KEY_TOO_LONG', 'k'.repeat(17));
    expectError(await post({ _event: 'x', o: { list: [{ ['n'.repeat(17)]: 1 }] } }), 400, 'ERR_KEY_TOO_LONG', `o.list[0].${'n'.repeat(17)}`);
  });
});

describe('value length', () => {
  test('at the limit is accepted; over it is a 400 ERR_VALUE_TOO_LONG naming the path', async () => {
    expect((await post({ _event: 'x', s: 'v'.repeat(32), list: ['w'.repeat(32)] })).status).toBe(202);
    expectError(await post({ _event: 'x', s: 'v'.repeat(33) }), 400, 'ERR_VALUE_TOO_LONG', 's');
    expectError(await post({ _event: 'x', list: ['ok', 'w'.repeat(33)] }), 400, 'ERR_VALUE_TOO_LONG', 'list[1]');
    expectError(await api.http.get(`/v3/event?_token=${api.token}&_event=x&s=${'v'.repeat(33)}`), 400, 'ERR_VALUE_TOO_LONG', 's');
  });

  test('_uid, _sid and _event have their own limit (LIMIT_ID_LENGTH)', async () => {
    expect((await post({ _event: 'e'.repeat(20), _uid: 'u'.repeat(20), _sid: 's'.repeat(20) })).status).toBe(202);
    expectError(await post({ _event: 'e'.repeat(21) }), 400, 'ERR_VALUE_TOO_LONG', '_event');
    expectError(await post({ _uid: 'u'.repeat(21) }, '/v3/user'), 400, 'ERR_VALUE_TOO_LONG', '_uid');
    expectError(await post({ _sid: 's'.repeat(21) }, '/v3/session'), 400, 'ERR_VALUE_TOO_LONG', '_sid');
  });
});

describe('nesting depth', () => {
  const nest = (n: number, leaf: unknown = 1, array = false): unknown => (n === 0 ? leaf : array ? [nest(n - 1, leaf, array)] : { k: nest(n - 1, leaf, array) });
  test('values with as many nested objects or arrays as the limit are accepted; one more is a 400 ERR_TOO_DEEP', async () => {
    expect((await post({ _event: 'x', o: nest(3), a: nest(3, 1, true) })).status).toBe(202);
    expectError(await post({ _event: 'x', o: nest(4) }), 400, 'ERR_TOO_DEEP', 'o.k.k.k');
    expectError(await post({ _event: 'x', a: nest(4, 1, true) }), 400, 'ERR_TOO_DEEP', 'a[0][0][0]');
  });

  test('a body nested far beyond the limit is refused, not a crash', async () => {
    const deep = `{"_event":"x","o":${'['.repeat(5000)}${']'.repeat(5000)}}`;
    expectError(await postRaw(gzipSync(deep), { 'content-encoding': 'gzip' }), 400, 'ERR_TOO_DEEP');
  });
});
