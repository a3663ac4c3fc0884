import { startTestApi, type TestApi } from '../helpers/api';
import { json, listen, type Listening, type RawResponse } from '../helpers/raw-http';
import { storedRecord, type ErrorAnswer } from '../helpers/records';

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

const FORM = 'application/x-www-form-urlencoded';
const post = (body: string, headers: Record<string, string>, path = '/v3/event') =>
  raw.request({ method: 'POST', path, headers: { authorization: `Tracker ${api.token}`, ...headers }, body: Buffer.from(body) });
const errorOf = (res: RawResponse) => (json(res) as ErrorAnswer).error;

describe('a form that is really JSON is read as JSON', () => {
  test("curl -d '{…}' without a Content-Type header (sent as a form) stores the event", async () => {
    const res = await post('{"_event":"signup","_uid":"u1","n":1.5,"tags":["a&b","c=d"],"note":"50% + tax"}', { 'content-type': FORM });
    expect(res.status).toBe(202);
    const id = (json(res) as { id: string }).id;
    expect(await storedRecord(api, id)).toMatchObject({ event: 'signup', uid: 'u1', properties: { n: 1.5, tags: ['a&b', 'c=d'], note: '50% + tax' } });
  });

  test('an array sent as a form is a batch', async () => {
    const res = await post('[{"_event":"a"},{"_event":"b"}]', { 'content-type': FORM });
    expect(res.status).toBe(202);
    expect(json(res)).toMatchObject({ accepted: 2, rejected: 0 });
  });

  test('JSON URL-encoded as the one field of a form is read as JSON too', async () => {
    const res = await post(encodeURIComponent('{"_uid":"u9","plan":"pro"}'), { 'content-type': FORM }, '/v3/user');
    expect(res.status).toBe(202);
    expect(await storedRecord(api, (json(res) as { id: string }).id)).toMatchObject({ kind: 'user', uid: 'u9', properties: { plan: 'pro' } });
  });

  test('integers beyond 2^53 in JSON sent as a form keep every digit, raw or URL-encoded', async () => {
    const raw = await post('{"_event":"order","_uid":603851970716743426,"id":-98765432109876543210}', { 'content-type': FORM });
    expect(raw.status).toBe(202);
    expect(await storedRecord(api, (json(raw) as { id: string }).id)).toMatchObject({ uid: '603851970716743426', properties: { id: -98765432109876543210n } });
    const encoded = await post(encodeURIComponent('{"_event":"order","ids":[12345678901234567890]}'), { 'content-type': FORM });
    expect(encoded.status).toBe(202);
    expect(await storedRecord(api, (json(encoded) as { id: string }).id)).toMatchObject({ properties: { ids: [12345678901234567890n] } });
  });

  test('ordinary forms stay forms', async () => {
    const res = await post('_event=order&total=42.50', { 'content-type': FORM });
    expect(res.status).toBe(202);
    expect(await storedRecord(api, (json(res) as { id: string }).id)).toMatchObject({ event: 'order', properties: { total: '42.50' } });
  });
});

describe('a misread body is refused with what arrived and what to send', () => {
  test('JSON-looking text sent as a form that does not parse', async () => {
    const res = await post('{"_event":"signup",}', { 'content-type': FORM });
    expect(res.status).toBe(400);
    expect(errorOf(res).code).toBe('ERR_MALFORMED_JSON');
    expect(errorOf(res).message).toMatch(/sent as a form .*send valid JSON with Content-Type: application\/json/i);
  });

  test('form fields sent as application/json', async () => {
    const res = await post('_event=signup&plan=pro', { 'content-type': 'application/json' });
    expect(res.status).toBe(400);
    expect(errorOf(res)).toMatchObject({ code: 'ERR_MALFORMED_JSON', message: expect.stringMatching(/Content-Type application\/json, but it is form fields .*send Content-Type: application\/x-www-form-urlencoded/i) });
  });

  test('form fields without a Content-Type', async () => {
    const res = await post('_event=signup', {});
    expect(res.status).toBe(400);
    expect(errorOf(res).message).toMatch(/no Content-Type, so it was read as JSON, but it is form fields/);
  });

  test('JSON encoded twice', async () => {
    const res = await post(JSON.stringify(JSON.stringify({ _event: 'x' })), { 'content-type': 'application/json' });
    expect(res.status).toBe(400);
    expect(errorOf(res)).toMatchObject({ code: 'ERR_INVALID_PAYLOAD', message: expect.stringMatching(/encoded twice.*send the object itself/) });
  });

  test('data= holding JSON text instead of base64', async () => {
    const res = await api.http.get(`/v3/event?_token=${api.token}&data=${encodeURIComponent('{"_event":"x"}')}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'ERR_MALFORMED_BASE64', field: 'data', message: expect.stringMatching(/holds JSON text, not base64: encode the JSON with base64/) });
  });

  test('a scalar says what it is', async () => {
    const res = await post('42', { 'content-type': 'application/json' });
    expect(errorOf(res).message).toMatch(/is JSON a number, not a record/);
  });
});
