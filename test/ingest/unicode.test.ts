import { gzipSync } from 'node:zlib';
import { startTestApi, type TestApi } from '../helpers/api';
import { listen } from '../helpers/raw-http';

/**
 * Lone UTF-16 surrogates, which JSON escapes can carry (`"\ud800"`) and no destination stores:
 * refused at the door with the field named, or replaced by U+FFFD when the tracker says so.
 */
let api: TestApi;
let replacing: { token: string };

beforeAll(async () => {
  api = await startTestApi();
  replacing = await api.addTracker({ invalidUnicode: 'replace' });
});
afterAll(() => api.close());

const LONE = '"\\ud800"';
const post = (body: string, token = api.token, headers: Record<string, string> = {}) => api.http.post('/v3/event').set('Authorization', `Tracker ${token}`).set('Content-Type', 'application/json').set(headers).send(body);

test.each([
  ['a value', `{"_event":"x","name":${LONE}}`, 'name'],
  ['a nested value', `{"_event":"x","props":{"list":["ok",${LONE}]}}`, 'props.list[1]'],
  ['a nested key', `{"_event":"x","props":{"a\\udc00b":1}}`, 'props.a\ufffdb'],
  ['a top-level key', `{"_event":"x","k\\ud800":1}`, 'k\ufffd'],
  ['_event', `{"_event":${LONE}}`, '_event'],
  ['_uid', `{"_event":"x","_uid":${LONE}}`, '_uid'],
])('%s with a lone surrogate is a 400 ERR_INVALID_UNICODE naming it', async (_what, body, field) => {
  const res = await post(body);
  expect(res.status).toBe(400);
  expect(res.body.error).toMatchObject({ code: 'ERR_INVALID_UNICODE', field });
});

test('gzip, data= base64 and arrays are checked the same way', async () => {
  const body = `{"_event":"x","name":${LONE}}`;
  const server = await listen(api.runtime.app);
  try {
    const gz = await server.request({ method: 'POST', path: '/v3/event', headers: { authorization: `Tracker ${api.token}`, 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: gzipSync(body) });
    expect(JSON.parse(gz.body.toString()).error).toMatchObject({ code: 'ERR_INVALID_UNICODE', field: 'name' });
  } finally {
    await server.close();
  }
  const data = Buffer.from(body).toString('base64');
  const viaGet = await api.http.get(`/v3/event?_token=${api.token}&data=${encodeURIComponent(data)}`);
  expect(viaGet.body.error).toMatchObject({ code: 'ERR_INVALID_UNICODE', field: 'name' });
  const batch = await post(`[{"_event":"ok"},${body}]`);
  expect(batch.status).toBe(202);
  expect(batch.body.results[1].error).toMatchObject({ code: 'ERR_INVALID_UNICODE', field: 'name' });
});

test('percent-encoded bytes that are no UTF-8 decode to U+FFFD, never to a lone surrogate', async () => {
  const res = await api.http.get(`/v3/event?_token=${api.token}&_event=x&name=%ED%A0%80`);
  expect(res.status).toBe(202);
  const stored = (await api.queuedRecords()).find((r) => r.id === res.body.id)!;
  expect(stored.properties.name).toBe('\ufffd\ufffd\ufffd');
});

test('valid pairs (emoji) pass unchanged', async () => {
  const res = await post('{"_event":"\\ud83d\\ude00","name":"\\ud83d\\ude00 ok","k\\ud83d\\ude00":1}');
  expect(res.status).toBe(202);
  const stored = (await api.queuedRecords()).find((r) => r.id === res.body.id)!;
  expect(stored).toMatchObject({ event: '😀', properties: { name: '😀 ok', 'k😀': 1 } });
});

test('a tracker set to replace stores U+FFFD in values, keys and reserved fields', async () => {
  const res = await post(`{"_event":"a\\ud800","_uid":${LONE},"name":${LONE},"props":{"k\\udc00":["x\\ud800y"]}}`, replacing.token);
  expect(res.status).toBe(202);
  const stored = (await api.queuedRecords()).find((r) => r.id === res.body.id)!;
  expect(stored).toMatchObject({ event: 'a\ufffd', uid: '\ufffd', properties: { name: '\ufffd', props: { 'k\ufffd': ['x\ufffdy'] } } });
  // What is queued is valid JSON text for every destination.
  expect(JSON.stringify(stored).isWellFormed()).toBe(true);
});
