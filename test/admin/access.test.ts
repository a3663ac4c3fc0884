import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { SESSION_COOKIE } from '../../src/admin/session-cookie';
import { startAdminApi, type AdminTestApi } from '../helpers/admin-api';
import { SseReader } from '../helpers/sse';
import { waitFor } from '../helpers/wait';

/**
 * People, sessions, tokens and the audit log over the admin API (docs/access.md). The matrix of
 * who may call what is test/admin/authorization-matrix.test.ts; this file follows the lives of
 * people and tokens: the first admin, invitations, sign-in limits, sessions ending, revocation seen
 * by another process, and what the audit log keeps.
 */

let api: AdminTestApi;
/** A second API process on the same Redis and keys: what one does, the other must see. */
let other: AdminTestApi;
let server: Server;
let base: string;

const PASSWORD = 'a long enough password';

beforeAll(async () => {
  api = await startAdminApi();
  // The same key file too, as two processes of one relay have (SECRETS_KEY_FILE, docs/operating.md).
  other = await startAdminApi({ REDIS_PREFIX: api.prefix, SECRETS_KEY_FILE: path.join(api.dataDir, 'secrets-key') });
  server = createServer(other.runtime.app.callback()).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 60_000);

afterAll(async () => {
  server?.close();
  await other?.close();
  await api?.close();
});

function sessionOf(res: { headers: Record<string, unknown> }): string {
  const set = (res.headers['set-cookie'] as string[] | undefined)?.find((c) => c.startsWith(`${SESSION_COOKIE}=`));
  if (!set) throw new Error('no session cookie');
  return set.split(';')[0]!.slice(SESSION_COOKIE.length + 1);
}

const withCookie = (id: string) => ({ Cookie: `${SESSION_COOKIE}=${id}` });
const admin = () => ({
  get: (url: string) => api.http.get(`/admin/api${url}`).set('Authorization', api.bearer),
  post: (url: string, body: object = {}) => api.http.post(`/admin/api${url}`).set('Authorization', api.bearer).send(body),
  patch: (url: string, body: object) => api.http.patch(`/admin/api${url}`).set('Authorization', api.bearer).send(body),
  del: (url: string) => api.http.delete(`/admin/api${url}`).set('Authorization', api.bearer),
});

async function signIn(email: string, password = PASSWORD, on = api): Promise<string> {
  return sessionOf(await on.http.post('/admin/api/session').send({ email, password }).expect(204));
}

async function addPerson(email: string, fields: object = {}): Promise<string> {
  return (await admin().post('/people', { email, password: PASSWORD, ...fields }).expect(201)).body.person.id as string;
}

describe('the first admin', () => {
  test('comes from the admin token: with an e-mail and a password on a relay without people; once only', async () => {
    expect((await api.http.get('/admin/api/session/setup')).body).toEqual({ firstAdminNeeded: true });
    const glass = sessionOf(await api.http.post('/admin/api/session').send({ token: api.adminToken }).expect(204));
    expect((await api.http.get('/admin/api/session').set(withCookie(glass))).body).toMatchObject({ via: 'break-glass', firstAdminNeeded: true });

    const weak = await api.http.post('/admin/api/session').send({ token: api.adminToken, email: 'first@example.com', password: 'short' });
    expect(weak.status).toBe(400);
    expect(weak.body.error).toMatchObject({ code: 'ERR_ADMIN_INVALID', field: 'password' });

    const first = await api.http.post('/admin/api/session').send({ token: api.adminToken, email: 'first@example.com', password: PASSWORD });
    expect(first.status).toBe(201);
    expect(first.body.person).toMatchObject({ email: 'first@example.com', role: 'admin', hasPassword: true });
    expect(JSON.stringify(first.body)).not.toContain('scrypt');
    const me = await api.http.get('/admin/api/session').set(withCookie(sessionOf(first)));
    expect(me.body).toMatchObject({ via: 'session', person: { email: 'first@example.com' }, rights: { admin: true } });

    const again = await api.http.post('/admin/api/session').send({ token: api.adminToken, email: 'second@example.com', password: PASSWORD });
    expect(again.status).toBe(409);
    expect((await api.http.get('/admin/api/session/setup')).body).toEqual({ firstAdminNeeded: false });
  });
});

describe('signing in', () => {
  test('a wrong password or an unknown e-mail is the same 401; ten failures for one e-mail are a 429 with Retry-After, even with the right password', async () => {
    await addPerson('limited@example.com');
    const wrong = await api.http.post('/admin/api/session').send({ email: 'limited@example.com', password: 'not the password' });
    const unknown = await api.http.post('/admin/api/session').send({ email: 'nobody-here@example.com', password: 'not the password' });
    expect([wrong.status, unknown.status]).toEqual([401, 401]);
    expect(wrong.body.error.message).toBe(unknown.body.error.message);
    for (let i = 1; i < 10; i++) await api.http.post('/admin/api/session').send({ email: 'limited@example.com', password: `wrong ${i}` }).expect(401);
    const limited = await api.http.post('/admin/api/session').send({ email: 'Limited@Example.com', password: PASSWORD });
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('ERR_ADMIN_SIGN_IN_LIMITED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
  }, 30_000);

  test('an invitation sets a password once, and signs in', async () => {
    const added = await admin().post('/people', { email: 'invited@example.com', name: 'Invited', trackers: { [api.tracker.id]: 'viewer' } }).expect(201);
    const { invitation, person } = added.body as { invitation: { url: string; code: string }; person: { hasPassword: boolean } };
    expect(person.hasPassword).toBe(false);
    expect(invitation.url).toBe(`https://track.example/admin/#/welcome/${invitation.code}`);
    expect((await api.http.get(`/admin/api/welcome/${invitation.code}`)).body).toEqual({ email: 'invited@example.com', name: 'Invited' });
    const accepted = await api.http.post(`/admin/api/welcome/${invitation.code}`).send({ password: PASSWORD }).expect(204);
    expect((await api.http.get('/admin/api/session').set(withCookie(sessionOf(accepted)))).body.rights).toEqual({ admin: false, trackers: { [api.tracker.id]: 'viewer' } });
    expect((await api.http.post(`/admin/api/welcome/${invitation.code}`).send({ password: PASSWORD })).status).toBe(404);
    await signIn('invited@example.com');
  });
});

describe('sessions end', () => {
  test('on sign-out, on a new password (every session but the new one), and on a narrower role', async () => {
    const id = await addPerson('ending@example.com', { trackers: { [api.tracker.id]: 'editor' } });
    const kept = await signIn('ending@example.com');
    const signedOut = await signIn('ending@example.com');
    await api.http.delete('/admin/api/session').set(withCookie(signedOut)).expect(204);
    expect((await api.http.get('/admin/api/session').set(withCookie(signedOut))).status).toBe(401);
    expect((await api.http.get('/admin/api/session').set(withCookie(kept))).status).toBe(200);

    const changing = await signIn('ending@example.com');
    const changed = await api.http.post('/admin/api/session/password').set(withCookie(changing)).send({ current: PASSWORD, password: `${PASSWORD} two` }).expect(204);
    expect((await api.http.get('/admin/api/session').set(withCookie(kept))).status).toBe(401);
    expect((await api.http.get('/admin/api/session').set(withCookie(changing))).status).toBe(401);
    const renewed = sessionOf(changed);
    expect((await api.http.get('/admin/api/session').set(withCookie(renewed))).status).toBe(200);

    await admin().patch(`/people/${id}`, { trackers: { [api.tracker.id]: 'viewer' } }).expect(200);
    expect((await api.http.get('/admin/api/session').set(withCookie(renewed))).status).toBe(401);
    const after = await signIn('ending@example.com', `${PASSWORD} two`);
    expect((await api.http.get('/admin/api/session').set(withCookie(after))).body.rights.trackers).toEqual({ [api.tracker.id]: 'viewer' });
  }, 30_000);
});

describe('tokens', () => {
  test('are shown once, listed by prefix and last use, never as themselves or their digest', async () => {
    await addPerson('scripts@example.com', { trackers: { [api.tracker.id]: 'editor' } });
    const session = await signIn('scripts@example.com');
    const made = await api.http.post('/admin/api/tokens').set(withCookie(session)).send({ name: 'nightly export', scopes: ['read'], expiresInDays: 30 }).expect(201);
    const { token, view } = made.body as { token: string; view: { id: string; prefix: string } };
    expect(token).toMatch(/^tbp_[A-Za-z0-9]{10}_[A-Za-z0-9_-]{43}$/);
    expect(token.startsWith(`${view.prefix}_`)).toBe(true);
    await api.http.get(`/admin/api/trackers/${api.tracker.id}`).set('Authorization', `Bearer ${token}`).expect(200);
    const listed = await api.http.get('/admin/api/tokens').set(withCookie(session)).expect(200);
    const text = JSON.stringify(listed.body);
    expect(text).not.toContain(token.slice(view.prefix.length + 1));
    expect(text).not.toContain('digest');
    await waitFor(async () => ((await api.http.get('/admin/api/tokens').set(withCookie(session))).body.tokens[0].lastUsedAt ?? undefined) as string | undefined);
    expect(listed.body.tokens[0]).toMatchObject({ id: view.id, prefix: view.prefix, name: 'nightly export', scopes: ['read'], state: 'active', kind: 'personal' });
  });

  test('a personal token cannot be given the admin scope by a member; a service token needs grants', async () => {
    await addPerson('member-no-admin@example.com', { trackers: { [api.tracker.id]: 'editor' } });
    const session = await signIn('member-no-admin@example.com');
    const refused = await api.http.post('/admin/api/tokens').set(withCookie(session)).send({ name: 'x', scopes: ['admin'] });
    expect(refused.status).toBe(403);
    const noGrants = await admin().post('/service-tokens', { name: 'ci', scopes: ['read'] });
    expect(noGrants.status).toBe(400);
    expect(noGrants.body.error.field).toBe('grants');
    const tooLong = await admin().post('/service-tokens', { name: 'ci', scopes: ['read'], grants: { [api.tracker.id]: 'viewer' }, expiresInDays: 400 });
    expect(tooLong.status).toBe(400);
  });

  test('a revocation made in one process holds in another at the next request, and closes an open live view there within a second', async () => {
    const made = await admin().post('/service-tokens', { name: 'watcher', scopes: ['read', 'payloads'], grants: { [api.tracker.id]: 'editor' } }).expect(201);
    const { token, view } = made.body as { token: string; view: { id: string } };
    const headers = { Authorization: `Bearer ${token}` };
    expect((await fetch(`${base}/admin/api/trackers/${api.tracker.id}`, { headers })).status).toBe(200);
    const live = await fetch(`${base}/admin/api/trackers/${api.tracker.id}/live`, { headers });
    expect(live.status).toBe(200);
    const reader = new SseReader(live.body!);
    expect((await reader.next()).event).toBe('ready');

    await admin().del(`/tokens/${view.id}`).expect(200);
    const revokedAt = Date.now();
    expect((await fetch(`${base}/admin/api/trackers/${api.tracker.id}`, { headers })).status).toBe(401);
    await reader.ended;
    expect(Date.now() - revokedAt).toBeLessThan(2000);
  });

  test('a demotion made in one process holds in another at the next request, for the person’s tokens and sessions', async () => {
    const id = await addPerson('demoted-elsewhere@example.com', { trackers: { [api.tracker.id]: 'editor' } });
    const session = await signIn('demoted-elsewhere@example.com');
    const token = (await api.http.post('/admin/api/tokens').set(withCookie(session)).send({ name: 'edits', scopes: ['read', 'write'] }).expect(201)).body.token as string;
    const rename = (headers: Record<string, string>) => fetch(`${base}/admin/api/trackers/${api.tracker.id}`, { method: 'PATCH', headers: { ...headers, 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'Still editing' }) }).then((r) => r.status);
    expect(await rename({ Authorization: `Bearer ${token}` })).toBe(200);
    expect(await rename(withCookie(session))).toBe(200);
    await admin().patch(`/people/${id}`, { trackers: { [api.tracker.id]: 'viewer' } }).expect(200);
    expect(await rename({ Authorization: `Bearer ${token}` })).toBe(403);
    expect(await rename(withCookie(session))).toBe(401);
  });

  test('a new e-mail signs in, the old one no longer does, and the person’s session and tokens stay; a taken one is a 409 on email', async () => {
    const id = await addPerson('old-address@example.com', { name: 'Moving', trackers: { [api.tracker.id]: 'viewer' } });
    const session = await signIn('old-address@example.com');
    await addPerson('taken@example.com');
    const taken = await admin().patch(`/people/${id}`, { email: 'taken@example.com' });
    expect({ status: taken.status, error: taken.body.error }).toEqual({ status: 409, error: { code: 'ERR_ADMIN_CONFLICT', field: 'email', message: "taken@example.com is already someone's e-mail." } });
    const invalid = await admin().patch(`/people/${id}`, { email: 'not an address' });
    expect({ status: invalid.status, field: invalid.body.error.field }).toEqual({ status: 400, field: 'email' });

    const moved = await admin().patch(`/people/${id}`, { email: 'New-Address@example.com', name: 'Moved' }).expect(200);
    expect(moved.body).toMatchObject({ id, email: 'New-Address@example.com', name: 'Moved', trackers: { [api.tracker.id]: 'viewer' } });
    expect((await api.http.get(`/admin/api/trackers/${api.tracker.id}`).set(withCookie(session))).status).toBe(200);
    expect((await api.http.post('/admin/api/session').send({ email: 'old-address@example.com', password: PASSWORD })).status).toBe(401);
    await signIn('new-address@example.com');
    // The old address is free again; the audit log keeps the change.
    await addPerson('old-address@example.com');
    const entry = (await admin().get('/audit?limit=50').expect(200)).body.entries.find((e: { action: string; outcome: string; target: { person?: string } }) => e.action === 'PATCH /people/:person' && e.target.person === id && e.outcome === 'ok');
    expect(JSON.stringify(entry.changes)).toContain('New-Address@example.com');
  });

  test('a removed tracker’s roles and token limits go with it: a tracker made again with its id is not open to them', async () => {
    await admin().post('/trackers', { name: 'Roles gone', id: 'roles-gone' }).expect(201);
    const id = await addPerson('had-a-role@example.com', { trackers: { 'roles-gone': 'editor', [api.tracker.id]: 'viewer' } });
    const session = await signIn('had-a-role@example.com');
    const limited = (await api.http.post('/admin/api/tokens').set(withCookie(session)).send({ name: 'only it', scopes: ['read'], trackers: ['roles-gone'] }).expect(201)).body.token as string;
    const service = (await admin().post('/service-tokens', { name: 'svc', scopes: ['read'], grants: { 'roles-gone': 'viewer', [api.tracker.id]: 'viewer' } }).expect(201)).body.token as string;
    const read = (headers: Record<string, string>, tracker = 'roles-gone') => api.http.get(`/admin/api/trackers/${tracker}`).set(headers).then((r) => r.status);
    expect([await read(withCookie(session)), await read({ Authorization: `Bearer ${limited}` }), await read({ Authorization: `Bearer ${service}` })]).toEqual([200, 200, 200]);

    const removed = await admin().del('/trackers/roles-gone').expect(200);
    expect(removed.body.revoked).toEqual({ people: 1, tokens: 2 });
    expect((await admin().get('/people').expect(200)).body.people.find((p: { id: string }) => p.id === id).trackers).toEqual({ [api.tracker.id]: 'viewer' });

    await admin().post('/trackers', { name: 'Roles gone, again', id: 'roles-gone' }).expect(201);
    expect([await read(withCookie(session)), await read({ Authorization: `Bearer ${limited}` }), await read({ Authorization: `Bearer ${service}` })]).toEqual([403, 403, 403]);
    // What else they had stays.
    expect([await read(withCookie(session), api.tracker.id), await read({ Authorization: `Bearer ${service}` }, api.tracker.id)]).toEqual([200, 200]);
  });

  test('a person removed takes their personal tokens along; a service token stays', async () => {
    const id = await addPerson('leaving@example.com', { trackers: { [api.tracker.id]: 'editor' } });
    const session = await signIn('leaving@example.com');
    const personal = (await api.http.post('/admin/api/tokens').set(withCookie(session)).send({ name: 'mine', scopes: ['read'] }).expect(201)).body.token as string;
    const service = (await admin().post('/service-tokens', { name: 'stays', scopes: ['read'], grants: { [api.tracker.id]: 'viewer' } }).expect(201)).body.token as string;
    await admin().del(`/people/${id}`).expect(200);
    const read = (t: string) => fetch(`${base}/admin/api/trackers/${api.tracker.id}`, { headers: { Authorization: `Bearer ${t}` } }).then((r) => r.status);
    expect(await read(personal)).toBe(401);
    expect(await read(service)).toBe(200);
    expect((await fetch(`${base}/admin/api/session`, { headers: withCookie(session) })).status).toBe(401);
  });
});

describe('the break-glass admin token', () => {
  test('every use is audited; switched off by an admin, it is refused in every process', async () => {
    await admin().get('/trackers').expect(200);
    const entries = (await admin().get('/audit?actor=break-glass&limit=5').expect(200)).body.entries as Array<{ action: string; actor: { kind: string } }>;
    expect(entries.some((e) => e.action === 'GET /trackers' && e.actor.kind === 'break-glass')).toBe(true);

    const adminId = await addPerson('only-admin-left@example.com', { role: 'admin' });
    const adminSession = await signIn('only-admin-left@example.com');
    await api.http.put('/admin/api/access/break-glass').set(withCookie(adminSession)).send({ enabled: false }).expect(200);
    // Each test process has an admin token of its own; the switch is the relay's, in Redis.
    expect((await fetch(`${base}/admin/api/trackers`, { headers: { Authorization: other.bearer } })).status).toBe(401);
    expect((await api.http.get('/admin/api/trackers').set('Authorization', api.bearer)).status).toBe(401);
    expect((await api.http.post('/admin/api/session').send({ token: api.adminToken })).status).toBe(401);
    await api.http.put('/admin/api/access/break-glass').set(withCookie(adminSession)).send({ enabled: true }).expect(200);
    expect((await fetch(`${base}/admin/api/trackers`, { headers: { Authorization: other.bearer } })).status).toBe(200);
    expect(adminId).toMatch(/^p_/);
  });
});

test('the last admin can be neither demoted nor removed', async () => {
  const people = (await admin().get('/people').expect(200)).body.people as Array<{ id: string; role: string }>;
  const admins = people.filter((p) => p.role === 'admin');
  for (const extra of admins.slice(1)) await admin().del(`/people/${extra.id}`).expect(200);
  const last = admins[0]!.id;
  expect((await admin().patch(`/people/${last}`, { role: 'member' })).status).toBe(409);
  expect((await admin().del(`/people/${last}`)).status).toBe(409);
});

describe('the audit log', () => {
  test('a change: who, from where, what, before and after with secrets masked, the outcome', async () => {
    const editor = await addPerson('auditor-subject@example.com', { trackers: { [api.tracker.id]: 'editor' } });
    const session = await signIn('auditor-subject@example.com');
    const added = await api.http
      .post(`/admin/api/trackers/${api.tracker.id}/sources`)
      .set(withCookie(session))
      .send({ type: 'hmac', id: 'audited', secret: 'canary-webhook-secret-1', hmac: { header: 'X-Sig' } })
      .expect(201);
    // Given by the caller, it is not echoed back.
    expect(added.body.secret).toBe('[redacted]');
    await api.http.patch(`/admin/api/trackers/${api.tracker.id}`).set(withCookie(session)).send({ name: 'Renamed by an editor' }).expect(200);

    const entries = (await admin().get(`/audit?tracker=${api.tracker.id}&actor=${editor}`).expect(200)).body.entries as Array<Record<string, unknown>>;
    const [rename, add] = entries;
    expect(rename).toMatchObject({
      actor: { kind: 'person', id: editor, label: 'auditor-subject@example.com' },
      action: 'PATCH /trackers/:id',
      target: { tracker: api.tracker.id },
      outcome: 'ok',
      status: 200,
      changes: [{ object: `tracker ${api.tracker.id}`, fields: [{ path: 'name', before: expect.any(String), after: 'Renamed by an editor' }] }],
    });
    expect(typeof rename!.from).toBe('string');
    expect(add).toMatchObject({ action: 'POST /trackers/:id/sources', outcome: 'ok' });
    const text = JSON.stringify(entries);
    expect(text).toContain('[redacted]');
    expect(text).not.toContain('canary-webhook-secret-1');
    const ownTracker = (await api.http.get(`/admin/api/trackers/${api.tracker.id}/audit`).set(withCookie(session)).expect(200)).body.entries as unknown[];
    expect(ownTracker.length).toBeGreaterThanOrEqual(2);
  });

  test('a refused attempt is kept with the refusal; the export is JSON lines, oldest first', async () => {
    await addPerson('peeker@example.com', {});
    const session = await signIn('peeker@example.com');
    await api.http.patch(`/admin/api/trackers/${api.tracker.id}`).set(withCookie(session)).send({ name: 'nope' }).expect(403);
    await api.http.get('/admin/api/people').set('Authorization', 'Bearer tbs_0000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA').expect(401);
    const refused = (await admin().get('/audit?outcome=refused&limit=20').expect(200)).body.entries as Array<Record<string, unknown>>;
    expect(refused).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ action: 'PATCH /trackers/:id', actor: expect.objectContaining({ label: 'peeker@example.com' }), status: 403, reason: expect.stringContaining('no role') }),
        expect.objectContaining({ action: 'GET /people', actor: expect.objectContaining({ kind: 'anonymous' }), status: 401 }),
      ]),
    );
    const exported = await admin().get('/audit/export').expect(200);
    expect(exported.headers['content-type']).toContain('application/x-ndjson');
    const lines = (exported.text as string).trim().split('\n').map((l) => JSON.parse(l) as { id: string });
    expect(lines.length).toBeGreaterThan(5);
    const ids = lines.map((l) => l.id);
    expect([...ids].sort((a, b) => Number(a.split('-')[0]) - Number(b.split('-')[0]) || Number(a.split('-')[1]) - Number(b.split('-')[1]))).toEqual(ids);
  });
});
