import { generateToken } from '../../src/core/trackers/tokens';
import { startTestApi, type TestApi } from '../helpers/api';
import { base64Json, storedCount, storedRecord, type ErrorAnswer } from '../helpers/records';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => api.close());

const ev = { _event: 'auth-check' };

async function expect401(res: { status: number; body: unknown }, code: string): Promise<void> {
  expect(res.status).toBe(401);
  expect((res.body as ErrorAnswer).error.code).toBe(code);
}

describe('every form on both methods', () => {
  test('header on POST', async () => {
    expect((await api.http.post('/v3/event').set('Authorization', `Tracker ${api.token}`).send(ev)).status).toBe(202);
  });
  test('header on GET', async () => {
    expect((await api.http.get('/v3/event?_event=x').set('Authorization', `Tracker ${api.token}`)).status).toBe(202);
  });
  test('the scheme name is case-insensitive', async () => {
    expect((await api.http.get('/v3/event?_event=x').set('Authorization', `tracker  ${api.token}`)).status).toBe(202);
  });
  test('body on POST (JSON)', async () => {
    expect((await api.http.post('/v3/event').send({ ...ev, _token: api.token })).status).toBe(202);
  });
  test('body on POST (form)', async () => {
    expect((await api.http.post('/v3/event').type('form').send(`_event=x&_token=${api.token}`)).status).toBe(202);
  });
  test('body on GET: the data= payload', async () => {
    expect((await api.http.get(`/v3/event?data=${base64Json({ ...ev, _token: api.token }, { urlSafe: true })}`)).status).toBe(202);
  });
  test('query on GET', async () => {
    expect((await api.http.get(`/v3/event?_event=x&_token=${api.token}`)).status).toBe(202);
  });
  test('query on POST', async () => {
    expect((await api.http.post(`/v3/event?_token=${api.token}`).send(ev)).status).toBe(202);
  });
  test('every array element may carry the same token', async () => {
    const res = await api.http.post('/v3/event').send([{ ...ev, _token: api.token }, { ...ev }]);
    expect(res.status).toBe(202);
    expect(res.body.accepted).toBe(2);
  });
  test('the same token in all three places is fine', async () => {
    const res = await api.http.post(`/v3/event?_token=${api.token}`).set('Authorization', `Tracker ${api.token}`).send({ ...ev, _token: api.token });
    expect(res.status).toBe(202);
  });
});

describe('two different tokens are a 401, never a silent pick', () => {
  let other: string;
  beforeAll(async () => {
    other = (await api.addTracker()).token;
  });

  test.each([
    ['header vs body', (t: string, o: string) => api.http.post('/v3/event').set('Authorization', `Tracker ${t}`).send({ ...ev, _token: o })],
    ['header vs query', (t: string, o: string) => api.http.get(`/v3/event?_event=x&_token=${o}`).set('Authorization', `Tracker ${t}`)],
    ['body vs query', (t: string, o: string) => api.http.post(`/v3/event?_token=${o}`).send({ ...ev, _token: t })],
    ['data= vs query', (t: string, o: string) => api.http.get(`/v3/event?_token=${o}&data=${base64Json({ ...ev, _token: t }, { urlSafe: true })}`)],
    ['two array elements', (t: string, o: string) => api.http.post('/v3/event').send([{ ...ev, _token: t }, { ...ev, _token: o }])],
    ['repeated in the query', (t: string, o: string) => api.http.get(`/v3/event?_event=x&_token=${t}&_token=${o}`)],
  ])('%s', async (_label, send) => {
    const before = await storedCount(api);
    const res = await send(api.token, other);
    await expect401(res, 'ERR_TOKEN_CONFLICT');
    expect(await storedCount(api)).toBe(before);
  });

  test('a conflicting token that is unknown is still a conflict, not a pick of the valid one', async () => {
    await expect401(await api.http.post('/v3/event').set('Authorization', `Tracker ${api.token}`).send({ ...ev, _token: generateToken() }), 'ERR_TOKEN_CONFLICT');
  });
});

describe('missing, unknown and revoked tokens', () => {
  test('no token: 401 ERR_MISSING_TOKEN', async () => {
    await expect401(await api.http.post('/v3/event').send(ev), 'ERR_MISSING_TOKEN');
    await expect401(await api.http.get('/v3/user?_uid=1'), 'ERR_MISSING_TOKEN');
  });

  test('unknown token: 401 ERR_INVALID_TOKEN', async () => {
    await expect401(await api.http.get(`/v3/event?_event=x&_token=${generateToken()}`), 'ERR_INVALID_TOKEN');
    await expect401(await api.http.get('/v3/event?_event=x&_token='), 'ERR_INVALID_TOKEN');
    await expect401(await api.http.post('/v3/event').send({ ...ev, _token: 12345 }), 'ERR_INVALID_TOKEN');
  });

  test('a revoked token is refused; the token that replaced it works', async () => {
    const { tracker, token: old } = await api.addTracker();
    const fresh = generateToken();
    const rotated = { ...tracker, tokens: [{ ...tracker.tokens[0]!, revokedAt: new Date().toISOString() }, { token: fresh, createdAt: new Date().toISOString() }] };
    expect((await api.http.get(`/v3/event?_event=x&_token=${old}`)).status).toBe(202);
    await api.runtime.store.save(rotated);
    // The process cache holds a lookup for TOKEN_CACHE_TTL_MS; the cross-process delay is tested with the resolver.
    api.runtime.resolver.clear();
    await expect401(await api.http.get(`/v3/event?_event=x&_token=${old}`), 'ERR_INVALID_TOKEN');
    expect((await api.http.get(`/v3/event?_event=x&_token=${fresh}`)).status).toBe(202);
  });

  test('a Tracker header with no token or a split one is a broken token, not an absent one', async () => {
    await expect401(await api.http.get(`/v3/event?_event=x`).set('Authorization', 'Tracker'), 'ERR_INVALID_TOKEN');
    await expect401(await api.http.get(`/v3/event?_event=x`).set('Authorization', `Tracker ${api.token} extra`), 'ERR_INVALID_TOKEN');
  });
});

describe('the Authorization header of other schemes belongs to the sender', () => {
  test.each(['Bearer abc.def.ghi', 'Basic dXNlcjpwYXNz', `Token ${'x'.repeat(40)}`, 'Trackers abc'])('%s is ignored', async (header) => {
    expect((await api.http.get(`/v3/event?_event=x&_token=${api.token}`).set('Authorization', header)).status).toBe(202);
    await expect401(await api.http.get('/v3/event?_event=x').set('Authorization', header), 'ERR_MISSING_TOKEN');
  });
});

test('_token is never stored, from any form', async () => {
  const ids: string[] = [];
  ids.push((await api.http.post(`/v3/event?_token=${api.token}`).send({ ...ev, _token: api.token })).body.id);
  ids.push((await api.http.get(`/v3/event?_event=x&_token=${api.token}`)).body.id);
  ids.push((await api.http.post('/v3/event').type('form').send(`_event=x&_token=${api.token}`)).body.id);
  ids.push((await api.http.get(`/v3/user?data=${base64Json({ _uid: 'u', _token: api.token }, { urlSafe: true })}`)).body.id);
  for (const id of ids) {
    const record = await storedRecord(api, id);
    expect(Object.keys(record.properties)).not.toContain('_token');
  }
  expect(JSON.stringify(await api.queuedRecords())).not.toContain(api.token);
});
