import { gzipSync } from 'node:zlib';
import { startTestApi, type TestApi } from '../../helpers/api';
import { listen } from '../../helpers/raw-http';
import { SEGMENT_LIMITS } from '../../../src/ingest/segment/limits';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api.close();
});

const basic = (key: string) => `Basic ${Buffer.from(`${key}:`).toString('base64')}`;
const track = (n: number, more: Record<string, unknown> = {}) => ({ type: 'track', event: 'Tapped', anonymousId: 'a-1', messageId: `m-${n}`, properties: { n }, ...more });

async function stored(trackerId: string) {
  return (await api.storedRecords()).filter((r) => r.trackerId === trackerId);
}

describe('paths', () => {
  test.each(['/v1/batch', '/v1/import', '/v1/import/', '/v1/b'])('%s stores a batch, 200 with a JSON body', async (path) => {
    const { tracker, token } = await api.addTracker();
    const res = await api.http.post(path).set('Authorization', basic(token)).send({ batch: [track(1), track(2)] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, accepted: 2, rejected: 0 });
    expect((await stored(tracker.id)).map((r) => r.id)).toEqual(['m-1', 'm-2']);
  });

  test('single calls take their type from the path, long and one-letter; text/plain and gzip bodies read as JSON', async () => {
    const { tracker, token } = await api.addTracker();
    const identify = await api.http.post('/v1/identify').set('Authorization', basic(token)).send({ userId: 'u', traits: { a: 1 }, messageId: 'i-1' });
    expect(identify.body).toEqual({ success: true, accepted: 1, id: 'i-1' });
    const body = JSON.stringify({ writeKey: token, anonymousId: 'x', name: 'Home', messageId: 'p-1', type: 'identify' });
    expect((await api.http.post('/v1/p').set('Content-Type', 'text/plain').send(body)).status).toBe(200);
    const raw = await listen(api.runtime.app);
    const zipped = await raw.request({ method: 'POST', path: '/v1/t', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', authorization: basic(token) }, body: gzipSync(JSON.stringify({ anonymousId: 'x', event: 'Zip' })) });
    await raw.close();
    expect(zipped.status).toBe(200);
    expect((await stored(tracker.id)).map((r) => [r.kind, r.event ?? null])).toEqual([['user', null], ['event', 'page_view'], ['event', 'Zip']]);
    const again = await api.http.post('/v1/identify').set('Authorization', basic(token)).send({ userId: 'u', messageId: 'i-1' });
    expect(again.body).toEqual({ success: true, accepted: 0, duplicate: true, id: 'i-1' });
  });

  test('/v1/m is answered and dropped; settings name this relay and the key', async () => {
    expect((await api.http.post('/v1/m').set('Content-Type', 'text/plain').send('{"series":[]}')).body).toEqual({ success: true });
    const settings = await api.http.get(`/v1/projects/${api.token}/settings`).set('Host', 'relay.example:8080').set('Origin', 'https://shop.example');
    expect(settings.status).toBe(200);
    expect(settings.headers['access-control-allow-origin']).toBe('https://shop.example');
    expect(settings.headers['cache-control']).toMatch(/max-age=\d+/);
    expect(settings.body.integrations['Segment.io']).toMatchObject({ apiKey: api.token, apiHost: 'relay.example:8080/v1', protocol: 'http' });
    expect(Object.keys(settings.body.integrations)).toEqual(['Segment.io']);
    expect(settings.body.metrics.sampleRate).toBe(0);
    const unknown = await api.http.get('/v1/projects/nope/settings');
    expect(unknown.status).toBe(401);
  });

  test('the preflight of analytics-next allows Authorization and X-Retry-Count', async () => {
    const res = await api.http.options('/v1/t').set('Origin', 'https://shop.example').set('Access-Control-Request-Method', 'POST').set('Access-Control-Request-Headers', 'authorization,content-type,x-retry-count');
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-headers']).toMatch(/Authorization/);
    expect(res.headers['access-control-allow-headers']).toMatch(/X-Retry-Count/);
  });
});

describe('answers', () => {
  test('one bad message never fails its batch: the rest stored, the bad ones reported by index', async () => {
    const { tracker, token } = await api.addTracker();
    const res = await api.http.post('/v1/batch').set('Authorization', basic(token)).send({
      batch: [track(1), { type: 'track', anonymousId: 'a', messageId: 'no-event' }, 'text', track(2, { writeKey: 'another' }), { type: 'identify', messageId: 'no-id' }, track(3, { properties: { _private: 1, __typename: 'T' } })],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, accepted: 2, rejected: 4 });
    expect(res.body.errors.map((e: { index: number; code: string }) => [e.index, e.code])).toEqual([
      [1, 'ERR_MISSING_FIELD'],
      [2, 'ERR_INVALID_PAYLOAD'],
      [3, 'ERR_TOKEN_CONFLICT'],
      [4, 'ERR_MISSING_FIELD'],
    ]);
    expect(res.body.errors[0].messageId).toBe('no-event');
    const records = await stored(tracker.id);
    expect(records.map((r) => r.id)).toEqual(['m-1', 'm-3']);
    expect(records[1]!.properties).toMatchObject({ __private: 1, __typename: 'T' });
  });

  test('errors carry code and message at the top (analytics-python drops a 4xx only then)', async () => {
    const cases: Array<[string, string, unknown, number, string]> = [
      ['/v1/batch', '', { batch: [track(1)] }, 401, 'ERR_MISSING_TOKEN'],
      ['/v1/batch', 'Basic ' + Buffer.from('nope:').toString('base64'), { batch: [track(1)] }, 401, 'ERR_INVALID_TOKEN'],
      ['/v1/batch', basic(api.token), { batch: 'x' }, 400, 'ERR_INVALID_PAYLOAD'],
      ['/v1/batch', basic(api.token), { batch: [] }, 400, 'ERR_EMPTY_BATCH'],
      ['/v1/track', basic(api.token), { anonymousId: 'a' }, 400, 'ERR_MISSING_FIELD'],
      ['/v1/nothing', basic(api.token), {}, 404, 'ERR_NOT_FOUND'],
    ];
    for (const [path, auth, body, status, code] of cases) {
      const req = api.http.post(path);
      if (auth) req.set('Authorization', auth);
      const res = await req.send(body as object);
      expect([path, res.status, res.body.code]).toEqual([path, status, code]);
      expect(res.body).toMatchObject({ success: false, message: expect.any(String), error: { code } });
    }
    const anonymous = await api.http.post('/v1/batch').send({ batch: [track(1)] });
    expect(anonymous.body.message).toMatch(/write key.*Basic/);
    const malformed = await api.http.post('/v1/batch').set('Authorization', basic(api.token)).set('Content-Type', 'application/json').send('{"batch": [');
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe('ERR_MALFORMED_JSON');
  });

  test("Segment's limits: 2 500 messages, 500 KB a batch, 32 KB a message", async () => {
    const { tracker, token } = await api.addTracker({ dedupWindowHours: 0 });
    const tooMany = await api.http.post('/v1/batch').set('Authorization', basic(token)).send({ batch: Array.from({ length: SEGMENT_LIMITS.batchMessages + 1 }, (_, i) => track(i)) });
    expect([tooMany.status, tooMany.body.code]).toEqual([413, 'ERR_TOO_MANY_RECORDS']);
    const full = await api.http.post('/v1/batch').set('Authorization', basic(token)).send({ batch: Array.from({ length: SEGMENT_LIMITS.batchMessages }, (_, i) => ({ type: 'track', event: 'e', anonymousId: 'a', messageId: `f-${i}` })) });
    expect(full.body).toMatchObject({ accepted: 2500 });
    const wide = 'x'.repeat(40_000);
    const big = await api.http.post('/v1/batch').set('Authorization', basic(token)).send({ batch: [track(1, { properties: { wide } }), track(2)] });
    expect(big.body).toMatchObject({ accepted: 1, rejected: 1, errors: [{ index: 0, code: 'ERR_PAYLOAD_TOO_LARGE' }] });
    const huge = await api.http.post('/v1/batch').set('Authorization', basic(token)).send({ batch: Array.from({ length: 20 }, (_, i) => track(i, { properties: { v: 'y'.repeat(30_000) } })) });
    expect([huge.status, huge.body.code]).toEqual([413, 'ERR_PAYLOAD_TOO_LARGE']);
    const single = await api.http.post('/v1/t').set('Authorization', basic(token)).send(track(9, { properties: { wide } }));
    expect([single.status, single.body.code]).toEqual([413, 'ERR_PAYLOAD_TOO_LARGE']);
    expect((await stored(tracker.id)).length).toBe(2501);
  });

  test('rate limits answer 429 with Retry-After; a refused origin 403', async () => {
    const limited = await api.addTracker({ rateLimit: { recordsPerSecond: 0.001, burst: 1 } });
    await api.http.post('/v1/t').set('Authorization', basic(limited.token)).send(track(1));
    const res = await api.http.post('/v1/t').set('Authorization', basic(limited.token)).send(track(2));
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toMatch(/^\d+$/);
    expect(res.body.code).toBe('ERR_RATE_LIMITED');
    const closed = await api.addTracker({ corsOrigins: ['https://mine.example'] });
    const foreign = await api.http.post('/v1/t').set('Authorization', basic(closed.token)).set('Origin', 'https://other.example').send(track(1));
    expect([foreign.status, foreign.body.code]).toEqual([403, 'ERR_ORIGIN_NOT_ALLOWED']);
  });
});

describe('the same relay behind it', () => {
  test('a session is recorded once, from its first message, even when the tracker deduplicates nothing', async () => {
    const { tracker, token } = await api.addTracker({ dedupWindowHours: 0 });
    const session = (n: number, url: string) => track(n, { integrations: { 'Actions Amplitude': { session_id: 1_800_000_000_000 } }, context: { page: { url } } });
    await api.http.post('/v1/batch').set('Authorization', basic(token)).send({ batch: [session(1, 'https://x/landing'), session(2, 'https://x/second')] });
    await api.http.post('/v1/batch').set('Authorization', basic(token)).send({ batch: [session(3, 'https://x/third')] });
    // The tracker deduplicates nothing: a repeated message is stored again.
    await api.http.post('/v1/batch').set('Authorization', basic(token)).send({ batch: [session(3, 'https://x/third')] });
    const records = await stored(tracker.id);
    const sessions = records.filter((r) => r.kind === 'session');
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toMatchObject({ sid: 'a-1:1800000000000', uid: 'a-1', properties: { landing_page: 'https://x/landing' } });
    expect(records.filter((r) => r.kind === 'event').map((r) => r.sid)).toEqual(Array(4).fill('a-1:1800000000000'));
  });

  test("personal-data rules apply to the mapped properties, context columns included", async () => {
    const { tracker, token } = await api.addTracker({ privacyRules: [{ property: 'email', action: 'drop' }, { property: 'context_ip', action: 'truncate-ip' }] });
    await api.http.post('/v1/batch').set('Authorization', basic(token)).send({ batch: [{ type: 'identify', userId: 'u', traits: { email: 'a@b.c', plan: 'x' } }, track(1, { context: { ip: '203.0.113.77' } })] });
    const [user, event] = await stored(tracker.id);
    expect(user!.properties).toEqual(expect.not.objectContaining({ email: expect.anything() }));
    expect(event!.properties.context_ip).toBe('203.0.113.0');
  });

  test('integers beyond 2^53 keep their digits', async () => {
    const { tracker, token } = await api.addTracker();
    const res = await api.http.post('/v1/batch').set('Authorization', basic(token)).set('Content-Type', 'application/json').send(`{"batch":[{"type":"track","event":"e","anonymousId":"a","properties":{"big":12345678901234567890123}}]}`);
    expect(res.body.accepted).toBe(1);
    const [event] = await stored(tracker.id);
    expect(event!.properties.big).toBe(12345678901234567890123n);
  });

});
