import { startTestApi, type TestApi } from '../helpers/api';
import { OwnRedis } from '../helpers/redis-server';
import { waitFor } from '../helpers/wait';

let redis: OwnRedis;
let api: TestApi;

beforeAll(async () => {
  redis = await OwnRedis.start();
  api = await startTestApi({ ENQUEUE_TIMEOUT_MS: '500', RETRY_AFTER_SECONDS: '3' }, {}, redis.url);
});
afterAll(async () => {
  await api.close().catch(() => undefined);
  await redis.destroy();
});

const send = () => api.http.post('/v3/event').set('Authorization', `Tracker ${api.token}`).send({ _event: 'outage-probe' });

test('Redis down: 503 with Retry-After, fast; Redis back: 202 again without restarting the server', async () => {
  expect((await send()).status).toBe(202);

  await redis.stop();
  const started = Date.now();
  const down = await send();
  expect(down.status).toBe(503);
  expect(down.body.error.code).toBe('ERR_QUEUE_UNAVAILABLE');
  expect(down.headers['retry-after']).toBe('3');
  // Fail fast: no hanging until some TCP timeout (the bound is generous, the point is "not stuck").
  expect(Date.now() - started).toBeLessThan(5000);
  expect((await api.http.get('/readyz')).status).toBe(503);
  expect((await api.http.get('/healthz')).status).toBe(200);
  const pixel = await api.http.get(`/v3/event/tracker.gif?_token=${api.token}&_event=x`);
  expect(pixel.status).toBe(503);
  expect(pixel.headers['content-type']).toBe('image/gif');

  await redis.resume();
  await waitFor(async () => (await send()).status === 202, { timeoutMs: 15_000, message: '202 after Redis returns' });
  expect((await api.http.get('/readyz')).status).toBe(200);

  // Every 2xx is in Redis; the append-only file kept what was accepted before the outage.
  const records = await api.queuedRecords();
  expect(records.filter((r) => r.event === 'outage-probe').length).toBeGreaterThanOrEqual(2);
});
