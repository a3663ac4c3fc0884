import { gzipSync } from 'node:zlib';
import { ERROR_CODES, type ErrorCode } from '../../src/core/errors';
import { startTestApi, type TestApi } from '../helpers/api';
import { json, listen, type Listening, type RawResponse } from '../helpers/raw-http';
import { base64Json, storedCount, type ErrorAnswer } from '../helpers/records';

let api: TestApi;
let raw: Listening;
beforeAll(async () => {
  api = await startTestApi();
  raw = await listen(api.runtime.app);
});
afterAll(async () => {
  await raw.close();
  await api.close();
});

/** Every error answer is `{"error":{code,message[,field]}}` with the registry's status for its code. */
function expectError(res: RawResponse | { status: number; body: unknown; headers: Record<string, unknown> }, code: ErrorCode, field?: string): void {
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = (Buffer.isBuffer(res.body) ? json(res as RawResponse) : res.body) as ErrorAnswer;
  expect(body.error).toEqual({ code, message: expect.any(String), ...(field !== undefined ? { field } : {}) });
  expect(res.status).toBe(ERROR_CODES[code].status);
}

const postRaw = (body: Buffer, headers: Record<string, string>) =>
  raw.request({ method: 'POST', path: `/v3/event?_token=${api.token}`, headers, body });

describe('routing', () => {
  test.each(['/', '/v3', '/v3/nope', '/v2/event', '/v3/event/tracker.png', '/v3/event/extra', '/V3/EVENT/x'])('GET %s is a JSON 404', async (path) => {
    expectError(await api.http.get(path), 'ERR_NOT_FOUND');
  });

  test.each([
    ['PUT', '/v3/event', 'HEAD, GET, POST'],
    ['DELETE', '/v3/user', 'HEAD, GET, POST'],
    ['PATCH', '/v3/session', 'HEAD, GET, POST'],
    ['PROPFIND', '/v3/event', 'HEAD, GET, POST'],
    ['POST', '/healthz', 'HEAD, GET'],
  ])('%s %s is a JSON 405 with Allow', async (method, path, allow) => {
    const res = await raw.request({ method, path });
    expectError(res, 'ERR_METHOD_NOT_ALLOWED');
    expect(res.headers.allow).toBe(allow);
  });

  test('a CORS preflight from any origin is answered with the CORS headers', async () => {
    for (const path of ['/v3/event', '/v3/user/tracker.gif']) {
      const res = await api.http
        .options(path)
        .set('Origin', 'https://any.example')
        .set('Access-Control-Request-Method', 'POST')
        .set('Access-Control-Request-Headers', 'authorization, content-type, content-encoding');
      expect(res.status).toBe(204);
      expect(res.headers['access-control-allow-origin']).toBe('https://any.example');
      expect(res.headers['access-control-allow-methods']).toMatch(/POST/);
      expect(res.headers['access-control-allow-headers']).toMatch(/Authorization/);
      expect(res.headers['access-control-allow-headers']).toMatch(/Content-Type/);
      expect(res.headers['access-control-allow-headers']).toMatch(/Idempotency-Key/);
      expect(res.headers['access-control-allow-headers']).toMatch(/Content-Encoding/);
      expect(res.headers['access-control-max-age']).toBe('600');
      expect(res.headers.vary).toMatch(/Origin/);
    }
  });

  test('a plain OPTIONS lists the allowed methods', async () => {
    const res = await api.http.options('/v3/event');
    expect(res.status).toBeLessThan(300);
    expect(res.headers.allow).toBe('HEAD, GET, POST');
  });

  test('simple requests from a browser get Access-Control-Allow-Origin', async () => {
    const res = await api.http.post('/v3/event').set('Origin', 'https://any.example').set('Authorization', `Tracker ${api.token}`).send({ _event: 'x' });
    expect(res.status).toBe(202);
    expect(res.headers['access-control-allow-origin']).toBe('https://any.example');
  });

  test('HEAD answers without a body and stores nothing', async () => {
    const before = await storedCount(api);
    const res = await api.http.head(`/v3/event?_token=${api.token}&_event=view`);
    expect(res.status).toBe(204);
    expect(res.text ?? '').toBe('');
    expect((await api.http.head('/v3/nope')).status).toBe(404);
    expect(await storedCount(api)).toBe(before);
  });
});

describe('415', () => {
  test.each(['application/xml', 'multipart/form-data; boundary=x', 'text/html', 'application/json; charset=iso-8859-1', 'image/gif', ';;;'])('Content-Type %s', async (type) => {
    expectError(await postRaw(Buffer.from('{"_event":"x"}'), { 'content-type': type }), 'ERR_UNSUPPORTED_MEDIA_TYPE');
  });

  test.each(['compress', 'zstd', 'gzip, gzip', 'deflate, br', 'x-unknown'])('Content-Encoding %s', async (encoding) => {
    const res = await postRaw(Buffer.from('{"_event":"x"}'), { 'content-type': 'application/json', 'content-encoding': encoding });
    expectError(res, 'ERR_UNSUPPORTED_ENCODING');
    expect(res.headers.connection).toBe('close');
  });
});

describe('malformed input is a 400 with the right code', () => {
  test('JSON', async () => {
    expectError(await postRaw(Buffer.from('{"_event":'), { 'content-type': 'application/json' }), 'ERR_MALFORMED_JSON');
    expectError(await postRaw(Buffer.from('_event=x'), { 'content-type': 'text/plain' }), 'ERR_MALFORMED_JSON');
    expectError(await postRaw(Buffer.from("{'_event':'x'}"), { 'content-type': 'application/json' }), 'ERR_MALFORMED_JSON');
  });

  test('a JSON value that is not an object or array of objects', async () => {
    for (const body of ['42', '"text"', 'null', 'true']) {
      expectError(await postRaw(Buffer.from(body), { 'content-type': 'application/json' }), 'ERR_INVALID_PAYLOAD');
    }
  });

  test('bytes that are not UTF-8', async () => {
    expectError(await postRaw(Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]), { 'content-type': 'application/json' }), 'ERR_MALFORMED_BODY');
  });

  test('base64', async () => {
    expectError(await api.http.get(`/v3/event?_token=${api.token}&data=${encodeURIComponent('not base64!')}`), 'ERR_MALFORMED_BASE64', 'data');
    expectError(await api.http.get(`/v3/event?_token=${api.token}&data=abcde`), 'ERR_MALFORMED_BASE64', 'data');
    expectError(await api.http.get(`/v3/event?_token=${api.token}&data=${Buffer.from([0xff, 0xfe, 0xfd]).toString('base64')}`), 'ERR_MALFORMED_BASE64', 'data');
  });

  test('base64 that does not hold JSON', async () => {
    expectError(await api.http.get(`/v3/event?_token=${api.token}&data=${Buffer.from('hello').toString('base64url')}`), 'ERR_MALFORMED_JSON', 'data');
  });

  test('data= alongside a body must hold an object', async () => {
    const res = await api.http.post(`/v3/event?_token=${api.token}&data=${base64Json([1], { urlSafe: true })}`).send({ _event: 'x' });
    expectError(res, 'ERR_INVALID_PAYLOAD', 'data');
  });

  test('gzip', async () => {
    const good = gzipSync('{"_event":"x"}');
    expectError(await postRaw(Buffer.from('{"_event":"x"}'), { 'content-type': 'application/json', 'content-encoding': 'gzip' }), 'ERR_MALFORMED_ENCODING');
    expectError(await postRaw(good.subarray(0, good.length - 6), { 'content-type': 'application/json', 'content-encoding': 'gzip' }), 'ERR_MALFORMED_ENCODING');
    const corrupt = Buffer.from(good);
    corrupt[12] = corrupt[12]! ^ 0xff;
    expectError(await postRaw(corrupt, { 'content-type': 'application/json', 'content-encoding': 'gzip' }), 'ERR_MALFORMED_ENCODING');
    expectError(await postRaw(Buffer.from('not brotli at all'), { 'content-type': 'application/json', 'content-encoding': 'br' }), 'ERR_MALFORMED_ENCODING');
  });

  test('nothing is stored by a refused request', async () => {
    const before = await storedCount(api);
    await postRaw(Buffer.from('{"_event":'), { 'content-type': 'application/json' });
    expect(await storedCount(api)).toBe(before);
  });
});

describe('per-tracker CORS origins', () => {
  let token: string;
  beforeAll(async () => {
    token = (await api.addTracker({ corsOrigins: ['https://shop.example'] })).token;
  });

  test('a listed origin is served', async () => {
    const res = await api.http.post('/v3/event').set('Origin', 'https://shop.example').set('Authorization', `Tracker ${token}`).send({ _event: 'x' });
    expect(res.status).toBe(202);
    expect(res.headers['access-control-allow-origin']).toBe('https://shop.example');
  });

  test('another origin is a 403 ERR_ORIGIN_NOT_ALLOWED that the browser may not read, and nothing is stored', async () => {
    const before = await storedCount(api);
    const res = await api.http.post('/v3/event').set('Origin', 'https://evil.example').set('Authorization', `Tracker ${token}`).send({ _event: 'x' });
    expectError(res, 'ERR_ORIGIN_NOT_ALLOWED');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    const pixel = await api.http.get(`/v3/event/tracker.gif?_token=${token}&_event=x`).set('Origin', 'null');
    expect(pixel.status).toBe(403);
    expect(pixel.headers['x-tributary-error']).toBe('ERR_ORIGIN_NOT_ALLOWED');
    expect(await storedCount(api)).toBe(before);
  });

  test('a request without an Origin (a server, a webhook) is never refused by it', async () => {
    expect((await api.http.post('/v3/event').set('Authorization', `Tracker ${token}`).send({ _event: 'x' })).status).toBe(202);
  });
});

describe('per-tracker rate limit', () => {
  test('a request over the limit is a 429 with Retry-After; nothing of it is stored', async () => {
    // Practically no refill, so the test does not depend on how fast it runs.
    const { token } = await api.addTracker({ rateLimit: { recordsPerSecond: 0.001, burst: 3 } });
    const send = (body: object) => api.http.post('/v3/event').set('Authorization', `Tracker ${token}`).send(body);
    expect((await send([{ _event: 'a' }, { _event: 'b' }])).status).toBe(202);
    const before = await storedCount(api);
    const res = await send([{ _event: 'c' }, { _event: 'd' }]);
    expectError(res, 'ERR_RATE_LIMITED');
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number.isInteger(Number(res.headers['retry-after']))).toBe(true);
    expect(await storedCount(api)).toBe(before);
    expect((await send({ _event: 'e' })).status).toBe(202);

    const pixel = await api.http.get(`/v3/event/tracker.gif?_token=${token}&_event=x`);
    expect(pixel.status).toBe(429);
    expect(pixel.headers['x-tributary-error']).toBe('ERR_RATE_LIMITED');
    expect(pixel.headers['retry-after']).toBeDefined();
  });

  test('the limit is per tracker', async () => {
    const limited = await api.addTracker({ rateLimit: { recordsPerSecond: 0.001, burst: 1 } });
    await api.http.get(`/v3/event?_token=${limited.token}&_event=x`);
    expect((await api.http.get(`/v3/event?_token=${limited.token}&_event=x`)).status).toBe(429);
    expect((await api.http.get(`/v3/event?_token=${api.token}&_event=x`)).status).toBe(202);
  });
});
