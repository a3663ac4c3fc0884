import { startTestApi, type TestApi } from '../helpers/api';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => api.close());

test('POST JSON event is queued', async () => {
  const res = await api.http.post('/v3/event').set('Authorization', `Tracker ${api.token}`).send({ _event: 'signup', plan: 'pro' });
  expect(res.status).toBe(202);
  expect(res.body.id).toMatch(/^[0-9a-f-]{36}$/);
  const records = await api.queuedRecords();
  expect(records).toHaveLength(1);
  expect(records[0]).toMatchObject({ kind: 'event', event: 'signup', properties: { plan: 'pro' }, trackerId: api.tracker.id });
});

test('GET pixel answers a gif', async () => {
  const res = await api.http.get(`/v3/event/tracker.gif?_token=${api.token}&_event=view`);
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toBe('image/gif');
});
