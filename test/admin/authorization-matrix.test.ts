import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { createAdminRouter } from '../../src/admin/router';
import type { DeclaredRoute } from '../../src/admin/guarded-routes';
import { SESSION_COOKIE } from '../../src/admin/session-cookie';
import { accessKeys } from '../../src/core/access/keys';
import type { Permission, TokenScope, TrackerRole } from '../../src/core/access/roles';
import { createLogger } from '../../src/core/logger';
import { startAdminApi, type AdminTestApi } from '../helpers/admin-api';

/**
 * Every admin route × every kind of caller → the answer class the access rules of docs/access.md
 * give, computed here by an oracle of its own (not by the code's `check`). The routes come from the
 * router itself: a route added without a declared permission fails the first test, and the matrix
 * grows with every declared one.
 */

interface Caller {
  name: string;
  headers: () => Record<string, string>;
  /** `refused`: a 401 whatever the route (no credential, or a dead one). */
  kind: 'refused' | 'session' | 'token' | 'break-glass';
  admin?: boolean;
  trackers?: Partial<Record<'A' | 'B', TrackerRole>>;
  scopes?: TokenScope[];
}

const SCOPE: Partial<Record<Permission, TokenScope>> = { 'signed-in': 'read', 'tracker:view': 'read', 'tracker:edit': 'write', 'tracker:payloads': 'payloads', 'relay:admin': 'admin' };

/** 401, 403, or `allowed` (anything else: 2xx, or the route's own 400/404 on a bogus body or id). */
function expected(route: DeclaredRoute, who: Caller): 401 | 403 | 'allowed' {
  if (who.kind === 'refused') return 401;
  const permission = route.permission;
  if (permission === 'person' && who.kind === 'token') return 403;
  const scope = SCOPE[permission];
  if (who.scopes && scope && !who.scopes.includes(scope)) return 403;
  if (permission === 'signed-in' || permission === 'person' || permission === 'open') return 'allowed';
  if (permission === 'relay:admin') return who.admin ? 'allowed' : 403;
  const role = who.admin ? 'editor' : who.trackers?.A;
  if (role === undefined) return 403;
  if (permission === 'tracker:view') return 'allowed';
  return role === 'editor' ? 'allowed' : 403;
}

let api: AdminTestApi;
let server: Server;
let base: string;
let declared: DeclaredRoute[];
const callers: Caller[] = [];
const A = 'matrix-a';
const B = 'matrix-b';

async function call(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<number> {
  const abort = new AbortController();
  const res = await fetch(`${base}${path}`, { method, headers: { ...headers, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) }, body: body === undefined ? undefined : JSON.stringify(body), signal: abort.signal });
  // The live view is an endless stream: the status is all this test reads.
  abort.abort();
  await res.body?.cancel().catch(() => undefined);
  return res.status;
}

const bearer = (token: string) => () => ({ Authorization: `Bearer ${token}` });
const cookie = (id: string) => () => ({ Cookie: `${SESSION_COOKIE}=${id}` });

async function signIn(email: string, password: string): Promise<string> {
  const res = await api.http.post('/admin/api/session').send({ email, password }).expect(204);
  const set = (res.headers['set-cookie'] as unknown as string[]).find((c) => c.startsWith(`${SESSION_COOKIE}=`))!;
  return set.split(';')[0]!.slice(SESSION_COOKIE.length + 1);
}

beforeAll(async () => {
  api = await startAdminApi();
  server = createServer(api.runtime.app.callback()).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/admin/api`;
  declared = createAdminRouter({ access: {} } as never, createLogger('silent')).routes.declared;
  const admin = { post: (url: string, body: object) => api.http.post(`/admin/api${url}`).set('Authorization', api.bearer).send(body) };
  await admin.post('/trackers', { id: A, name: 'Matrix A' }).expect(201);
  await admin.post('/trackers', { id: B, name: 'Matrix B' }).expect(201);

  const password = 'correct horse battery staple';
  const person = async (email: string, fields: object) => (await admin.post('/people', { email, password, ...fields }).expect(201)).body.person.id as string;
  const viewerA = await person('viewer-a@example.com', { trackers: { [A]: 'viewer' } });
  const editorA = await person('editor-a@example.com', { trackers: { [A]: 'editor' } });
  await person('editor-b@example.com', { trackers: { [B]: 'editor' } });
  await person('nobody@example.com', {});
  await person('admin@example.com', { role: 'admin' });
  const demoted = await person('demoted@example.com', { trackers: { [A]: 'editor' } });

  const session = async (email: string) => signIn(email, password);
  const personalToken = async (email: string, scopes: TokenScope[]) => {
    const id = await session(email);
    const res = await api.http.post('/admin/api/tokens').set('Cookie', `${SESSION_COOKIE}=${id}`).send({ name: `${email} ${scopes.join('+')}`, scopes }).expect(201);
    return res.body as { token: string; view: { id: string } };
  };
  const serviceToken = async (body: object) => (await admin.post('/service-tokens', body).expect(201)).body as { token: string; view: { id: string } };

  const all: TokenScope[] = ['read', 'write', 'payloads'];
  const editorFull = await personalToken('editor-a@example.com', all);
  const editorRead = await personalToken('editor-a@example.com', ['read']);
  const revoked = await personalToken('editor-a@example.com', all);
  await admin.post('/trackers', { id: 'unused', name: 'x' }); // a change in between, as in life
  await api.http.delete(`/admin/api/tokens/${revoked.view.id}`).set('Authorization', `Bearer ${revoked.token}`).expect(200);
  const expired = await personalToken('editor-a@example.com', all);
  const keys = accessKeys(api.prefix);
  const record = JSON.parse((await api.runtime.redis.hget(keys.tokens, expired.view.id))!) as object;
  await api.runtime.redis.hset(keys.tokens, expired.view.id, JSON.stringify({ ...record, expiresAt: new Date(Date.now() - 1000).toISOString() }));
  const demotedToken = await personalToken('demoted@example.com', all);
  const demotedSession = await session('demoted@example.com');
  await api.http.patch(`/admin/api/people/${demoted}`).set('Authorization', api.bearer).send({ trackers: { [A]: 'viewer' } }).expect(200);

  callers.push(
    { name: 'anonymous', headers: () => ({}), kind: 'refused' },
    { name: 'a token of no one', headers: bearer('tbs_0000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'), kind: 'refused' },
    { name: 'viewer of A', headers: cookie(await session('viewer-a@example.com')), kind: 'session', trackers: { A: 'viewer' } },
    { name: 'editor of A', headers: cookie(await session('editor-a@example.com')), kind: 'session', trackers: { A: 'editor' } },
    { name: 'editor of B', headers: cookie(await session('editor-b@example.com')), kind: 'session', trackers: { B: 'editor' } },
    { name: 'member without grants', headers: cookie(await session('nobody@example.com')), kind: 'session', trackers: {} },
    { name: 'admin', headers: cookie(await session('admin@example.com')), kind: 'session', admin: true },
    { name: 'break-glass admin token', headers: bearer(api.adminToken), kind: 'break-glass', admin: true },
    { name: "editor of A's token, every scope", headers: bearer(editorFull.token), kind: 'token', trackers: { A: 'editor' }, scopes: all },
    { name: "editor of A's token, read only", headers: bearer(editorRead.token), kind: 'token', trackers: { A: 'editor' }, scopes: ['read'] },
    { name: 'service token editing A', headers: bearer((await serviceToken({ name: 'ci', scopes: all, grants: { [A]: 'editor' } })).token), kind: 'token', trackers: { A: 'editor' }, scopes: all },
    { name: 'service token reading A', headers: bearer((await serviceToken({ name: 'dash', scopes: ['read'], grants: { [A]: 'editor' } })).token), kind: 'token', trackers: { A: 'editor' }, scopes: ['read'] },
    { name: 'admin service token', headers: bearer((await serviceToken({ name: 'ops', scopes: [...all, 'admin'], role: 'admin' })).token), kind: 'token', admin: true, scopes: [...all, 'admin'] },
    { name: 'revoked token', headers: bearer(revoked.token), kind: 'refused' },
    { name: 'expired token', headers: bearer(expired.token), kind: 'refused' },
    { name: "demoted person's token (now viewer of A)", headers: bearer(demotedToken.token), kind: 'token', trackers: { A: 'viewer' }, scopes: all },
    { name: "demoted person's session from before", headers: cookie(demotedSession), kind: 'refused' },
  );
  // The people above (viewer, editors) were made to be found by id only through the routes.
  expect([viewerA, editorA]).toHaveLength(2);
}, 120_000);

afterAll(async () => {
  server?.close();
  await api?.close();
});

/**
 * Path parameters: tracker A, and ids that exist nowhere, so an allowed change ends at the route's
 * own 404 or 400 (the removal of a tracker too: it takes no body to refuse).
 */
function concrete(path: string, method = 'GET'): string {
  return path
    .replace('/admin/api', '')
    .replace(':id', method === 'DELETE' && path.endsWith('/trackers/:id') ? 'nope' : A)
    .replace(':dest', 'nope')
    .replace(':source', 'nope')
    .replace(':person', 'p_nope')
    .replace(':token', 'nope')
    .replace(':code', 'nope');
}

test('every route the admin router registers declares a permission', () => {
  const { router, routes } = createAdminRouter({ access: {} } as never, createLogger('silent'));
  const registered = router.stack.filter((layer) => layer.methods.length > 0).flatMap((layer) => layer.methods.filter((m) => m !== 'HEAD').map((m) => `${m} ${layer.path}`));
  const undeclared = registered.filter((key) => {
    const [method, path] = key.split(' ') as [string, string];
    return routes.permissionOf(method, path) === undefined;
  });
  expect(undeclared).toEqual([]);
  expect(registered.length).toBe(routes.declared.length);
});

test('a route registered without a permission is refused to everyone, the break-glass token included', async () => {
  const { router } = createAdminRouter(api.runtime.admin!, createLogger('silent'));
  router.get('/undeclared', (ctx) => {
    ctx.body = { leaked: true };
  });
  const app = new Koa();
  app.use(router.routes());
  const res = await (await import('supertest')).default(app.callback()).get('/admin/api/undeclared').set('Authorization', api.bearer);
  expect(res.status).toBe(403);
  expect(JSON.stringify(res.body)).not.toContain('leaked');
});

test('the matrix: each declared route, for each kind of caller, answers as the access rules say', async () => {
  const mismatches: string[] = [];
  let checked = 0;
  for (const route of declared.filter((r) => r.permission !== 'open')) {
    const path = concrete(route.path, route.method);
    for (const who of callers) {
      const status = await call(route.method, path, who.headers(), route.method === 'GET' ? undefined : { bogus: 1 });
      const want = expected(route, who);
      const got = status === 401 || status === 403 ? status : 'allowed';
      checked++;
      if (got !== want) mismatches.push(`${route.method} ${route.path} (${route.permission}) as ${who.name}: ${status}, expected ${want}`);
    }
  }
  expect(mismatches).toEqual([]);
  expect(checked).toBeGreaterThan(50 * callers.length);
}, 120_000);

test('open routes answer without a credential', async () => {
  for (const route of declared.filter((r) => r.permission === 'open')) {
    const status = await call(route.method, concrete(route.path), {}, route.method === 'GET' || route.method === 'DELETE' ? undefined : { bogus: 1 });
    expect({ route: `${route.method} ${route.path}`, refused: status === 401 || status === 403 }).toEqual({ route: `${route.method} ${route.path}`, refused: false });
  }
});

test('each caller lists only the trackers it has a role on', async () => {
  const listed = async (who: Caller) => ((await (await fetch(`${base}/trackers`, { headers: who.headers() })).json()) as { trackers: Array<{ id: string }> }).trackers.map((t) => t.id).filter((id) => id === A || id === B);
  const by = (name: string) => callers.find((c) => c.name === name)!;
  expect(await listed(by('viewer of A'))).toEqual([A]);
  expect(await listed(by('editor of B'))).toEqual([B]);
  expect(await listed(by('member without grants'))).toEqual([]);
  expect((await listed(by('admin'))).sort()).toEqual([A, B]);
  expect(await listed(by('service token reading A'))).toEqual([A]);
});
