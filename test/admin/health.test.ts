import { useAdminApi } from '../helpers/admin-api';

const admin = useAdminApi();

test('needs the admin token', async () => {
  const res = await admin.api.http.get('/admin/api/health');
  expect(res.status).toBe(401);
});

test('reports Redis memory as the budget sampled it', async () => {
  await admin.api.runtime.memory.sample();
  const res = await admin.get('/health');
  expect(res.status).toBe(200);
  const { memory } = res.body;
  expect(memory.usedBytes).toBeGreaterThan(0);
  expect(memory.sampledAt).toEqual(expect.any(String));
  // The shared test Redis may or may not have a maxmemory: the state follows from it.
  if (memory.limitBytes === null) expect(memory).toMatchObject({ state: 'unlimited', watermarks: null, limitSource: null });
  else expect(['ok', 'warning', 'full']).toContain(memory.state);
});
