import { startTestApi } from '../helpers/api';
import { startAdminApi, type AdminTestApi } from '../helpers/admin-api';

let api: AdminTestApi;
beforeAll(async () => {
  api = await startAdminApi();
});
afterAll(async () => api.close());

function expectUnauthorized(res: { status: number; body: unknown; headers: Record<string, string> }): void {
  expect(res.status).toBe(401);
  expect(res.body).toEqual({ error: { code: 'ERR_ADMIN_UNAUTHORIZED', message: expect.stringContaining('Bearer') } });
  expect(res.headers['www-authenticate']).toBe('Bearer realm="tributary-admin"');
}

test('no Authorization header: 401', async () => {
  expectUnauthorized(await api.http.get('/admin/api/trackers'));
});

test('a wrong bearer token, or the right one in another scheme: 401', async () => {
  expectUnauthorized(await api.http.get('/admin/api/trackers').set('Authorization', `Bearer ${api.adminToken}x`));
  expectUnauthorized(await api.http.get('/admin/api/trackers').set('Authorization', `Basic ${api.adminToken}`));
  expectUnauthorized(await api.http.get('/admin/api/trackers').set('Authorization', api.adminToken));
});

test('tracker tokens never grant access, in any form', async () => {
  expectUnauthorized(await api.http.get('/admin/api/trackers').set('Authorization', `Bearer ${api.token}`));
  expectUnauthorized(await api.http.get('/admin/api/trackers').set('Authorization', `Tracker ${api.token}`));
  expectUnauthorized(await api.http.get(`/admin/api/trackers?_token=${api.token}`));
  expectUnauthorized(await api.http.post('/admin/api/trackers').send({ _token: api.token, name: 'x' }));
});

test('the admin token passes, whatever the scheme case', async () => {
  const res = await api.http.get('/admin/api/trackers').set('Authorization', `bearer ${api.adminToken}`);
  expect(res.status).toBe(200);
});

test('the admin token is no tracker token', async () => {
  const res = await api.http.post('/v3/event').set('Authorization', `Tracker ${api.adminToken}`).send({ _event: 'x' });
  expect(res.status).toBe(401);
  expect(res.body.error.code).toBe('ERR_INVALID_TOKEN');
});

test('an unknown admin path is a JSON 404, a wrong method a 405', async () => {
  const missing = await api.http.get('/admin/api/nothing').set('Authorization', api.bearer);
  expect(missing.status).toBe(404);
  expect(missing.body.error.code).toBe('ERR_NOT_FOUND');
  const method = await api.http.put('/admin/api/trackers').set('Authorization', api.bearer);
  expect(method.status).toBe(405);
  expect(method.body.error.code).toBe('ERR_METHOD_NOT_ALLOWED');
});

test('without admin services the admin API does not exist', async () => {
  const plain = await startTestApi();
  try {
    const res = await plain.http.get('/admin/api/trackers').set('Authorization', 'Bearer whatever-token-value-here');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('ERR_NOT_FOUND');
  } finally {
    await plain.close();
  }
});
