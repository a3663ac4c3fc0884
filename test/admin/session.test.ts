import { SESSION_COOKIE } from '../../src/admin/session-cookie';
import { startAdminApi, type AdminTestApi } from '../helpers/admin-api';

let api: AdminTestApi;
/** A break-glass console session, opened with the admin token. */
let sessionId: string;
beforeAll(async () => {
  api = await startAdminApi();
  sessionId = await signIn();
});
afterAll(async () => api.close());

/** The console's own origin, as the browser would send it: the Host the request names. */
const HOST = 'console.example:8080';
const OWN_ORIGIN = `http://${HOST}`;
const FOREIGN_ORIGIN = 'https://evil.example';

const cookie = (value: string) => `${SESSION_COOKIE}=${value}`;

function setCookieHeader(res: { headers: Record<string, unknown> }): string {
  const header = res.headers['set-cookie'] as string[] | undefined;
  const ours = header?.find((c) => c.startsWith(`${SESSION_COOKIE}=`));
  if (ours === undefined) throw new Error(`no ${SESSION_COOKIE} cookie in ${JSON.stringify(header)}`);
  return ours;
}

/** Cookie attributes by lower-case name; flags map to true. */
function attributes(setCookie: string): Record<string, string | true> {
  const [, ...parts] = setCookie.split(';');
  return Object.fromEntries(
    parts.map((p) => {
      const [name, ...value] = p.trim().split('=');
      return [name!.toLowerCase(), value.length > 0 ? value.join('=') : true];
    }),
  );
}

async function signIn(): Promise<string> {
  const res = await api.http.post('/admin/api/session').send({ token: api.adminToken }).expect(204);
  return setCookieHeader(res).split(';')[0]!.slice(SESSION_COOKIE.length + 1);
}

async function trackerIds(): Promise<string[]> {
  const res = await api.http.get('/admin/api/trackers').set('Authorization', api.bearer).expect(200);
  return (res.body.trackers as Array<{ id: string }>).map((t) => t.id);
}

describe('POST /admin/api/session', () => {
  test('a wrong token is a 401 naming the token field, and sets no cookie', async () => {
    const res = await api.http.post('/admin/api/session').send({ token: `${api.adminToken}x` });
    expect(res.status).toBe(401);
    expect(res.body.error).toMatchObject({ code: 'ERR_ADMIN_UNAUTHORIZED', field: 'token' });
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  test('a body with neither token nor e-mail is refused', async () => {
    const res = await api.http.post('/admin/api/session').send({});
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'ERR_ADMIN_INVALID' });
  });

  test('the right token sets an HttpOnly, SameSite=Strict cookie under /admin holding an opaque session id (never the token), not Secure over http', async () => {
    const res = await api.http.post('/admin/api/session').send({ token: api.adminToken });
    expect(res.status).toBe(204);
    const set = setCookieHeader(res);
    const value = set.split(';')[0]!.slice(SESSION_COOKIE.length + 1);
    expect(value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(set).not.toContain(api.adminToken);
    const attrs = attributes(set);
    expect(attrs).toMatchObject({ path: '/admin', samesite: 'strict', httponly: true });
    expect(attrs.secure).toBeUndefined();
    // A working day: 12 hours from now.
    const lifetime = attrs['max-age'] !== undefined ? Number(attrs['max-age']) * 1000 : Date.parse(String(attrs.expires)) - Date.now();
    expect(lifetime).toBeGreaterThan(11 * 3600_000);
    expect(lifetime).toBeLessThanOrEqual(12 * 3600_000);
  });
});

describe('the cookie alone', () => {
  test('grants GET /admin/api/trackers and GET /admin/api/session', async () => {
    const trackers = await api.http.get('/admin/api/trackers').set('Cookie', cookie(sessionId));
    expect(trackers.status).toBe(200);
    expect(trackers.body.trackers.map((t: { id: string }) => t.id)).toContain(api.tracker.id);
    const session = await api.http.get('/admin/api/session').set('Cookie', cookie(sessionId));
    expect(session.status).toBe(200);
    expect(session.body).toMatchObject({ via: 'break-glass', actor: { kind: 'break-glass' }, rights: { admin: true } });
  });

  test('GET /admin/api/session without it is a 401', async () => {
    const res = await api.http.get('/admin/api/session');
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('ERR_ADMIN_UNAUTHORIZED');
  });

  test('a tracker token, the admin token itself, or a wrong value, as the cookie is refused', async () => {
    for (const value of [api.token, api.adminToken, `${sessionId}x`, '']) {
      const res = await api.http.get('/admin/api/trackers').set('Cookie', cookie(value));
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('ERR_ADMIN_UNAUTHORIZED');
    }
  });

  test('a cookie of another name is no session', async () => {
    const res = await api.http.get('/admin/api/trackers').set('Cookie', `admin=${api.adminToken}`);
    expect(res.status).toBe(401);
  });
});

describe('changes sent with the cookie', () => {
  const create = (name: string) => api.http.post('/admin/api/trackers').set('Host', HOST).set('Cookie', cookie(sessionId)).send({ name });

  test('from a foreign Origin: 403 ERR_ADMIN_CROSS_ORIGIN, nothing created', async () => {
    const res = await create('Foreign Origin').set('Origin', FOREIGN_ORIGIN);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('ERR_ADMIN_CROSS_ORIGIN');
    expect(res.body.error.message).toContain(`must come from ${OWN_ORIGIN}, not ${FOREIGN_ORIGIN}`);
    expect(await trackerIds()).not.toContain('foreign-origin');
  });

  test('from the same host on another scheme or port: 403', async () => {
    for (const origin of [`https://${HOST}`, 'http://console.example', 'null']) {
      const res = await create('Near Origin').set('Origin', origin);
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('ERR_ADMIN_CROSS_ORIGIN');
    }
    expect(await trackerIds()).not.toContain('near-origin');
  });

  test("from the server's own Origin: done", async () => {
    const res = await create('Own Origin').set('Origin', OWN_ORIGIN);
    expect(res.status).toBe(201);
    expect(res.body.tracker.id).toBe('own-origin');
  });

  test('without Origin, Sec-Fetch-Site cross-site or same-site: 403; same-origin or none: done', async () => {
    for (const site of ['cross-site', 'same-site']) {
      const res = await create(`Fetch ${site}`).set('Sec-Fetch-Site', site);
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('ERR_ADMIN_CROSS_ORIGIN');
    }
    const ids = await trackerIds();
    expect(ids).not.toContain('fetch-cross-site');
    expect(ids).not.toContain('fetch-same-site');
    expect((await create('Fetch same-origin').set('Sec-Fetch-Site', 'same-origin')).status).toBe(201);
    expect((await create('Fetch none').set('Sec-Fetch-Site', 'none')).status).toBe(201);
  });

  test('GET with a foreign Origin is read-only, so it passes', async () => {
    const res = await api.http.get('/admin/api/trackers').set('Host', HOST).set('Cookie', cookie(sessionId)).set('Origin', FOREIGN_ORIGIN);
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });
});

test('a bearer token with a foreign Origin works: no cookie rides along', async () => {
  const res = await api.http.post('/admin/api/trackers').set('Host', HOST).set('Authorization', api.bearer).set('Origin', FOREIGN_ORIGIN).send({ name: 'Bearer Foreign' });
  expect(res.status).toBe(201);
  expect(res.body.tracker.id).toBe('bearer-foreign');
});

test('DELETE /admin/api/session ends the session and clears the cookie', async () => {
  const ending = await signIn();
  expect((await api.http.get('/admin/api/session').set('Cookie', cookie(ending))).status).toBe(200);
  const res = await api.http.delete('/admin/api/session').set('Cookie', cookie(ending));
  expect((await api.http.get('/admin/api/session').set('Cookie', cookie(ending))).status).toBe(401);
  expect(res.status).toBe(204);
  const set = setCookieHeader(res);
  expect(set.startsWith(`${SESSION_COOKIE}=;`)).toBe(true);
  const attrs = attributes(set);
  expect(attrs).toMatchObject({ path: '/admin', samesite: 'strict', httponly: true });
  const expired = attrs['max-age'] === '0' || Date.parse(String(attrs.expires)) <= Date.now();
  expect(expired).toBe(true);
});

describe('CORS', () => {
  const origin = 'https://shop.example';

  test('admin answers carry no Access-Control-Allow-Origin, even to a request with an Origin', async () => {
    const ok = await api.http.get('/admin/api/trackers').set('Authorization', api.bearer).set('Origin', origin);
    expect(ok.status).toBe(200);
    expect(ok.headers['access-control-allow-origin']).toBeUndefined();
    expect(ok.headers['access-control-allow-credentials']).toBeUndefined();
    const refused = await api.http.get('/admin/api/trackers').set('Origin', origin);
    expect(refused.status).toBe(401);
    expect(refused.headers['access-control-allow-origin']).toBeUndefined();
  });

  test('a preflight to /admin/api gets no CORS allow headers; /v3/event still answers it', async () => {
    const preflight = (path: string) =>
      api.http.options(path).set('Origin', origin).set('Access-Control-Request-Method', 'POST').set('Access-Control-Request-Headers', 'authorization, content-type');
    const admin = await preflight('/admin/api/trackers');
    for (const name of ['access-control-allow-origin', 'access-control-allow-methods', 'access-control-allow-headers', 'access-control-allow-credentials']) {
      expect(admin.headers[name]).toBeUndefined();
    }
    const session = await preflight('/admin/api/session');
    expect(session.headers['access-control-allow-origin']).toBeUndefined();

    const tracker = await preflight('/v3/event');
    expect(tracker.status).toBe(204);
    expect(tracker.headers['access-control-allow-origin']).toBe(origin);
    expect(tracker.headers['access-control-allow-methods']).toContain('POST');
    const sent = await api.http.post('/v3/event').set('Origin', origin).set('Authorization', `Tracker ${api.token}`).send({ _event: 'cors' });
    expect(sent.status).toBe(202);
    expect(sent.headers['access-control-allow-origin']).toBe(origin);
  });
});
