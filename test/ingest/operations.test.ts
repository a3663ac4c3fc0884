import { Writable } from 'node:stream';
import { createLogger } from '../../src/core/logger';
import { startTestApi, type TestApi } from '../helpers/api';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => api.close());

test('/metrics counts requests by endpoint and status, accepted records and enqueue latency', async () => {
  await api.http.post('/v3/event').set('Authorization', `Tracker ${api.token}`).send([{ _event: 'a' }, { _event: 'b' }, { nope: 1 }]);
  await api.http.get('/v3/user?_uid=u1');
  const res = await api.http.get('/metrics');
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain/);
  expect(res.text).toMatch(/tributary_http_requests_total\{endpoint="\/v3\/event",method="POST",status="202"\} 1/);
  expect(res.text).toMatch(/tributary_http_requests_total\{endpoint="\/v3\/user",method="GET",status="401"\} 1/);
  expect(res.text).toMatch(/tributary_records_accepted_total\{kind="event"\} 2/);
  expect(res.text).toMatch(/tributary_records_rejected_total\{code="ERR_MISSING_FIELD"\} 1/);
  expect(res.text).toMatch(/tributary_enqueue_duration_seconds_count [1-9]/);
});

test('/healthz is up and /readyz sees Redis', async () => {
  expect((await api.http.get('/healthz')).body).toEqual({ status: 'ok', pid: process.pid });
  expect((await api.http.get('/readyz')).body).toMatchObject({ status: 'ready' });
});

test('logs redact tokens and credentials wherever they appear', () => {
  let out = '';
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      out += chunk.toString();
      done();
    },
  });
  const logger = createLogger('info', sink);
  logger.info({ authorization: 'Tracker trk_secret1', token: 'trk_secret2', req: { headers: { authorization: 'Tracker trk_secret3' } }, settings: { credentials: { private_key: 'KEY' } } }, 'x');
  expect(out).not.toMatch(/trk_secret|KEY/);
  expect(out).toContain('[redacted]');
});

test('closing the runtime flushes writes already accepted, then refuses new ones with 503', async () => {
  const other = await startTestApi();
  const inflight = Array.from({ length: 20 }, (_, i) => other.http.post('/v3/event').set('Authorization', `Tracker ${other.token}`).send({ _event: 'late', i }));
  const statuses = (await Promise.all(inflight)).map((r) => r.status);
  const closing = other.runtime.writer.close();
  const refused = await other.http.post('/v3/event').set('Authorization', `Tracker ${other.token}`).send({ _event: 'after' });
  await closing;
  expect(refused.status).toBe(503);
  expect(refused.body.error.code).toBe('ERR_SHUTTING_DOWN');
  const stored = (await other.queuedRecords()).filter((r) => r.event === 'late');
  expect(stored).toHaveLength(statuses.filter((s) => s === 202).length);
  await other.close();
});
