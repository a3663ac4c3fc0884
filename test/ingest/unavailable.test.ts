import { startTestApi, type TestApi } from '../helpers/api';
import type { ErrorAnswer } from '../helpers/records';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy';

/** Redis reached through a relay the test can cut, so the real Redis stays up for everyone else. */
let proxy: TcpProxy;
let api: TestApi;
beforeAll(async () => {
  proxy = await startTcpProxy('127.0.0.1', 6379);
  api = await startTestApi({ RETRY_AFTER_SECONDS: '7' }, {}, `redis://127.0.0.1:${proxy.port}`);
});
afterAll(async () => {
  await proxy.start();
  await api.close();
  await proxy.close();
});

async function until(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

test('Redis unreachable: 503 ERR_QUEUE_UNAVAILABLE with Retry-After, at once; service resumes by itself', async () => {
  const send = () => api.http.post('/v3/event').set('Authorization', `Tracker ${api.token}`).send({ _event: 'x' });
  expect((await send()).status).toBe(202);

  await proxy.stop();
  await until(() => api.runtime.redis.status !== 'ready', 'the producer to notice');
  // With the token lookup still cached the write is refused; with it gone the lookup is. Both are a 503.
  for (const clearCache of [false, true]) {
    if (clearCache) api.runtime.resolver.clear();
    const down = await send();
    expect(down.status).toBe(503);
    expect((down.body as ErrorAnswer).error.code).toBe('ERR_QUEUE_UNAVAILABLE');
    expect(down.headers['retry-after']).toBe('7');
  }

  const pixel = await api.http.get(`/v3/event/tracker.gif?_token=${api.token}&_event=x`);
  expect(pixel.status).toBe(503);
  expect(pixel.headers['content-type']).toBe('image/gif');
  expect(pixel.headers['x-tributary-error']).toBe('ERR_QUEUE_UNAVAILABLE');

  await proxy.start();
  await until(async () => (await send()).status === 202, 'a 202 after Redis came back');
});
