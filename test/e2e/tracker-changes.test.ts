import { createHmac } from 'node:crypto';
import { SourceService } from '../../src/operator/source-service';
import { TrackerService } from '../../src/operator/tracker-service';
import { startTestApi, type TestApi } from '../helpers/api';
import { waitFor } from '../helpers/wait';

/**
 * A change made elsewhere (the CLI, the console, another API process) reaches this process's
 * caches at once, not when they expire: here they would keep a stale answer for a minute.
 */
let api: TestApi;

beforeAll(async () => {
  api = await startTestApi({ TOKEN_CACHE_TTL_MS: '60000' });
});
afterAll(async () => api.close());

test('a source added elsewhere answers its first webhook within a second, though the API cached its absence', async () => {
  const body = JSON.stringify({ id: 'evt_1', type: 'ping' });
  const post = (secret: string) =>
    api.http
      .post(`/v3/webhooks/${api.tracker.id}/hooks`)
      .set({ 'Content-Type': 'application/json', 'X-Signature': createHmac('sha256', secret).update(body).digest('hex') })
      .send(body);
  expect((await post('a-signing-secret')).status).toBe(404);
  // Another door, as the CLI would: a store of its own over the same Redis.
  await new SourceService(api.runtime.store).add(api.tracker.id, { id: 'hooks', type: 'hmac', secret: 'a-signing-secret', hmac: { header: 'X-Signature' } });
  const started = Date.now();
  await waitFor(async () => (await post('a-signing-secret')).status === 200, { timeoutMs: 5000, intervalMs: 50, message: 'the new source to answer 200' });
  expect(Date.now() - started).toBeLessThan(1000);
});

test('a token revoked elsewhere stops working within a second', async () => {
  const { tracker, token } = await api.addTracker({ id: 'revoked', name: 'Revoked' });
  const send = () => api.http.post('/v3/event').set('Authorization', `Tracker ${token}`).send({ _event: 'ping' });
  expect((await send()).status).toBe(202);
  const trackers = new TrackerService(api.runtime.store);
  await trackers.rotateToken(tracker.id);
  await trackers.revokeToken(tracker.id, token);
  const started = Date.now();
  await waitFor(async () => (await send()).status === 401, { timeoutMs: 5000, intervalMs: 50, message: 'the revoked token to be refused' });
  expect(Date.now() - started).toBeLessThan(1000);
});
