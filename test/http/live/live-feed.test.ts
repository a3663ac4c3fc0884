import { createHmac } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { loadConfig } from '../../../src/core/config';
import type { LiveEntry } from '../../../src/http/live/live-entry';
import { createLogger } from '../../../src/core/logger';
import { createMetrics } from '../../../src/core/metrics';
import { openApiRuntime, type ApiRuntime } from '../../../src/boot/api-runtime';
import { SourceService } from '../../../src/operator/source-service';
import { startAdminApi, type AdminTestApi } from '../../helpers/admin-api';
import { TEST_REDIS_URL } from '../../helpers/redis';
import { openSse, type SseConnection } from '../../helpers/sse';
import { waitFor } from '../../helpers/wait';

let api: AdminTestApi;
let server: http.Server;
let base: string;
let redis: Redis;
const open: SseConnection[] = [];

function listen(handler: http.RequestListener): Promise<{ server: http.Server; base: string }> {
  const s = http.createServer(handler);
  return new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve({ server: s, base: `http://127.0.0.1:${(s.address() as AddressInfo).port}` })));
}

function stop(s: http.Server): Promise<void> {
  s.closeAllConnections();
  return new Promise((resolve) => s.close(() => resolve()));
}

beforeAll(async () => {
  api = await startAdminApi();
  ({ server, base } = await listen(api.runtime.app.callback()));
  redis = new Redis(TEST_REDIS_URL);
});

afterEach(() => {
  for (const c of open.splice(0)) c.abort();
});

afterAll(async () => {
  redis.disconnect();
  await stop(server);
  await api.close();
});

const liveUrl = (trackerId: string, at = base) => `${at}/admin/api/trackers/${trackerId}/live`;
const channel = (trackerId: string) => `${api.prefix}:live:channel:${trackerId}`;

/** Watches a tracker; resolves once the server said `ready`, so requests from now on are shown. */
async function watch(trackerId: string, at = base): Promise<SseConnection> {
  const conn = await openSse(liveUrl(trackerId, at), { Authorization: api.bearer });
  open.push(conn);
  expect(conn.response.status).toBe(200);
  const ready = await conn.reader.next();
  expect(ready).toEqual({ event: 'ready', data: JSON.stringify({ trackerId }) });
  return conn;
}

/** The next `request` event, parsed; its raw text too, to search for leaked secrets. */
async function nextEntry(conn: SseConnection, timeoutMs = 5000): Promise<{ entry: LiveEntry; text: string }> {
  const event = await conn.reader.next(timeoutMs);
  expect(event.event).toBe('request');
  return { entry: JSON.parse(event.data) as LiveEntry, text: event.data };
}

/** An accepted event whose entry is easy to recognise: used to show nothing arrived before it. */
async function sendMarker(token: string, name: string): Promise<void> {
  await api.http.post('/v3/event').set('Authorization', `Tracker ${token}`).send({ _event: name }).expect(202);
}

async function numsub(name: string): Promise<number> {
  const reply = (await redis.pubsub('NUMSUB', name)) as [string, number];
  return Number(reply[1]);
}

describe('GET /admin/api/trackers/:id/live', () => {
  test('needs the admin token', async () => {
    const res = await fetch(liveUrl(api.tracker.id));
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('ERR_ADMIN_UNAUTHORIZED');
  });

  test('an unknown tracker is a JSON 404', async () => {
    const res = await fetch(liveUrl('nope'), { headers: { Authorization: api.bearer } });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('ERR_ADMIN_NOT_FOUND');
  });

  test('answers an event stream that starts with `ready`', async () => {
    const conn = await watch(api.tracker.id);
    expect(conn.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(conn.response.headers.get('cache-control')).toBe('no-store');
    expect(conn.response.headers.get('x-accel-buffering')).toBe('no');
  });

  test('the console cookie works too (EventSource sends no headers)', async () => {
    const signedIn = await api.http.post('/admin/api/session').send({ token: api.adminToken }).expect(204);
    const cookie = (signedIn.headers['set-cookie'] as unknown as string[])[0]!.split(';')[0]!;
    const conn = await openSse(liveUrl(api.tracker.id), { Cookie: cookie });
    open.push(conn);
    expect(conn.response.status).toBe(200);
    expect((await conn.reader.next()).event).toBe('ready');
  });
});

describe('entries', () => {
  test('an accepted JSON event: what came in, the answer, the record as stored; the token redacted', async () => {
    const conn = await watch(api.tracker.id);
    const res = await api.http
      .post(`/v3/event?_token=${api.token}&campaign=spring`)
      .set('Origin', 'https://shop.example')
      .set('User-Agent', 'live-test/1.0')
      .send({ _event: 'signup', _uid: 'ada', plan: 'pro', seats: 3 });
    expect(res.status).toBe(202);

    const { entry, text } = await nextEntry(conn);
    expect(text).not.toContain(api.token);
    expect(entry.kind).toBe('event');
    expect(Date.parse(entry.at)).not.toBeNaN();
    expect(entry.request).toEqual({
      method: 'POST',
      path: '/v3/event',
      query: { _token: '[redacted]', campaign: 'spring' },
      contentType: 'application/json',
      origin: 'https://shop.example',
      userAgent: 'live-test/1.0',
    });
    expect(entry.response).toEqual({ status: 202, body: { accepted: 1, id: res.body.id }, fixed: null, errorCode: null });
    expect(entry.recordCount).toBe(1);
    expect(entry.records).toHaveLength(1);
    expect(entry.records[0]).toMatchObject({ kind: 'event', id: res.body.id, event: 'signup', uid: 'ada', properties: { campaign: 'spring', plan: 'pro', seats: 3 } });
  });

  test('a rejected record: the 400 with its code, and no records', async () => {
    const conn = await watch(api.tracker.id);
    const res = await api.http.post('/v3/event').set('Authorization', `Tracker ${api.token}`).send({ _event: 'x', _foo: 1 });
    expect(res.status).toBe(400);
    const { entry, text } = await nextEntry(conn);
    expect(text).not.toContain(api.token);
    expect(entry.response).toMatchObject({ status: 400, errorCode: 'ERR_RESERVED_FIELD', body: { error: { code: 'ERR_RESERVED_FIELD' } } });
    expect(entry.records).toEqual([]);
    expect(entry.recordCount).toBe(0);
  });

  test('a batch with one bad record: the per-record results, only the good record stored', async () => {
    const conn = await watch(api.tracker.id);
    const res = await api.http.post('/v3/event').set('Authorization', `Tracker ${api.token}`).send([{ _event: 'good' }, { _event: 'bad', _foo: 1 }]);
    expect(res.status).toBe(202);
    const { entry } = await nextEntry(conn);
    expect(entry.response.status).toBe(202);
    expect(entry.response.body).toEqual(res.body);
    expect(entry.response.body).toMatchObject({ accepted: 1, rejected: 1, results: [{ id: expect.any(String) }, { error: { code: 'ERR_RESERVED_FIELD' } }] });
    expect(entry.records.map((r) => [r.id, r.event])).toEqual([[res.body.results[0].id, 'good']]);
    expect(entry.recordCount).toBe(1);
  });

  test('a pixel without _event: the fixed gif, status 400, the code from the header', async () => {
    const conn = await watch(api.tracker.id);
    const res = await api.http.get(`/v3/event/tracker.gif?_token=${api.token}&plan=pro`);
    expect(res.status).toBe(400);
    const { entry, text } = await nextEntry(conn);
    expect(text).not.toContain(api.token);
    expect(entry.kind).toBe('event');
    expect(entry.request).toMatchObject({ method: 'GET', path: '/v3/event/tracker.gif', query: { _token: '[redacted]', plan: 'pro' } });
    expect(entry.response).toEqual({ status: 400, body: null, fixed: 'gif', errorCode: 'ERR_MISSING_FIELD' });
    expect(entry.records).toEqual([]);
  });

  test('an accepted pixel shows the record and no body', async () => {
    const conn = await watch(api.tracker.id);
    const res = await api.http.get(`/v3/event/tracker.gif?_token=${api.token}&_event=view`);
    expect(res.status).toBe(200);
    const { entry } = await nextEntry(conn);
    expect(entry.response).toEqual({ status: 200, body: null, fixed: 'gif', errorCode: null });
    expect(entry.records).toEqual([expect.objectContaining({ event: 'view' })]);
  });

  test('malformed JSON with the token in the header is attributed to its tracker', async () => {
    const conn = await watch(api.tracker.id);
    const res = await api.http.post('/v3/event').set('Authorization', `Tracker ${api.token}`).set('Content-Type', 'application/json').send('{"_event":');
    expect(res.status).toBe(400);
    const { entry, text } = await nextEntry(conn);
    expect(text).not.toContain(api.token);
    expect(entry.kind).toBe('event');
    expect(entry.response).toMatchObject({ status: 400, errorCode: 'ERR_MALFORMED_JSON' });
    expect(entry.records).toEqual([]);
  });

  test('webhook deliveries: a refused one with its 401 and named reason, an accepted one with its event', async () => {
    const secret = 'live-view-github-secret';
    await new SourceService(api.runtime.store).add(api.tracker.id, { type: 'github', id: 'gh-live', secret });
    const conn = await watch(api.tracker.id);
    const raw = JSON.stringify({ zen: 'Design for failure.' });
    const headers = { 'Content-Type': 'application/json', 'X-GitHub-Event': 'ping', 'X-GitHub-Delivery': 'live-delivery-1' };
    const forged = await api.http.post(`/v3/webhooks/${api.tracker.id}/gh-live`).set({ ...headers, 'X-Hub-Signature-256': `sha256=${createHmac('sha256', 'not-the-secret').update(raw).digest('hex')}` }).send(raw);
    expect(forged.status).toBe(401);
    const refused = await nextEntry(conn);
    expect(refused.entry).toMatchObject({ kind: 'event', request: { method: 'POST', path: `/v3/webhooks/${api.tracker.id}/gh-live` }, records: [] });
    expect(refused.entry.response).toMatchObject({ status: 401, errorCode: 'ERR_WEBHOOK_SIGNATURE', body: { error: { code: 'ERR_WEBHOOK_SIGNATURE', message: expect.stringMatching(/^bad-signature: /) } } });

    const signed = await api.http.post(`/v3/webhooks/${api.tracker.id}/gh-live`).set({ ...headers, 'X-Hub-Signature-256': `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}` }).send(raw);
    expect(signed.status).toBe(200);
    const accepted = await nextEntry(conn);
    expect(accepted.entry.response).toMatchObject({ status: 200, errorCode: null, body: { accepted: 1, event: 'github.ping' } });
    expect(accepted.entry.records).toEqual([expect.objectContaining({ kind: 'event', id: 'live-delivery-1', event: 'github.ping' })]);
    // What the console shows never holds the secret nor the signature.
    expect(refused.text + accepted.text).not.toMatch(new RegExp(`${secret}|sha256=`));
  });

  test("another tracker's requests, and requests with an unknown token, never show", async () => {
    const other = await api.addTracker({ id: 'live-other' });
    const conn = await watch(api.tracker.id);
    await api.http.post('/v3/event').set('Authorization', `Tracker ${other.token}`).send({ _event: 'theirs' }).expect(202);
    await api.http.post('/v3/event').set('Authorization', `Tracker ${other.token}`).set('Content-Type', 'application/json').send('{').expect(400);
    const unknown = 'trk_unknownunknownunknownunknownunknown00';
    await api.http.post('/v3/event').set('Authorization', `Tracker ${unknown}`).send({ _event: 'nobody' }).expect(401);
    await api.http.post('/v3/event').set('Authorization', `Tracker ${unknown}`).set('Content-Type', 'application/json').send('{').expect(400);
    await api.http.get(`/v3/event/tracker.gif?_token=${unknown}&_event=nobody`).expect(401);
    await sendMarker(api.token, 'marker');
    const { entry } = await nextEntry(conn);
    expect(entry.records[0]?.event).toBe('marker');
    // The refusals above are attributed asynchronously: a second marker shows none slipped in late.
    await sendMarker(api.token, 'marker-2');
    expect((await nextEntry(conn)).entry.records[0]?.event).toBe('marker-2');
  });

  test('every watcher of a tracker gets each entry', async () => {
    const a = await watch(api.tracker.id);
    const b = await watch(api.tracker.id);
    await sendMarker(api.token, 'both');
    expect((await nextEntry(a)).entry.records[0]?.event).toBe('both');
    expect((await nextEntry(b)).entry.records[0]?.event).toBe('both');
  });
});

describe('across processes', () => {
  let other: ApiRuntime;
  let otherServer: { server: http.Server; base: string };
  beforeAll(async () => {
    // The same DATA_DIR, so the same key file: the tracker's secrets open in both processes.
    other = await openApiRuntime(loadConfig({ REDIS_PREFIX: api.prefix, LOG_LEVEL: 'silent', DATA_DIR: api.dataDir }), TEST_REDIS_URL, createLogger('silent'), { metrics: createMetrics(false) });
    otherServer = await listen(other.app.callback());
  });
  afterAll(async () => {
    await stop(otherServer.server);
    await other.close();
  });

  test('a request to another API process reaches the watcher within its poll', async () => {
    const conn = await watch(api.tracker.id);
    // That process reads the watch list once per pollMs (1000 ms by default).
    await waitFor(() => other.live.isWatched(api.tracker.id), { timeoutMs: 3000, message: 'the other process to see the watch' });
    const res = await fetch(`${otherServer.base}/v3/event`, { method: 'POST', headers: { Authorization: `Tracker ${api.token}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ _event: 'elsewhere' }) });
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };
    const { entry } = await nextEntry(conn, 3000);
    expect(entry.records[0]).toMatchObject({ id, event: 'elsewhere' });
  });

  test('once the watcher leaves, neither process publishes the tracker any more (within a poll)', async () => {
    const { tracker, token } = await api.addTracker({ id: 'live-stop' });
    const conn = await watch(tracker.id);
    await waitFor(() => other.live.isWatched(tracker.id), { timeoutMs: 3000, message: 'the other process to see the watch' });
    // A watch longer than pollMs has been through this process's own poll too; run that poll now
    // rather than wait for its timer (the one private call of this file).
    await (api.runtime.live as unknown as { pollWatched: () => Promise<void> }).pollWatched();
    conn.abort();
    await waitFor(async () => (await numsub(channel(tracker.id))) === 0, { timeoutMs: 3000, message: 'the channel to lose its subscriber' });

    const here = jest.spyOn(api.runtime.redis, 'publish');
    const there = jest.spyOn(other.redis, 'publish');
    try {
      const send = (at: string) => fetch(`${at}/v3/event`, { method: 'POST', headers: { Authorization: `Tracker ${token}`, 'Content-Type': 'application/json' }, body: '{"_event":"unwatched"}' });
      await waitFor(
        async () => {
          here.mockClear();
          there.mockClear();
          expect((await send(base)).status).toBe(202);
          expect((await send(otherServer.base)).status).toBe(202);
          return here.mock.calls.length + there.mock.calls.length === 0;
        },
        { timeoutMs: 2500, intervalMs: 100, message: 'requests to stop being published' },
      );
    } finally {
      here.mockRestore();
      there.mockRestore();
    }
  });
});

describe('when the watcher leaves', () => {
  test('the subscription goes: no subscriber left on the channel', async () => {
    const tracker = await api.addTracker({ id: 'live-leave' });
    const conn = await watch(tracker.tracker.id);
    expect(await numsub(channel(tracker.tracker.id))).toBe(1);
    conn.abort();
    await waitFor(async () => (await numsub(channel(tracker.tracker.id))) === 0, { timeoutMs: 3000, message: 'the channel to lose its subscriber' });
  });

  test('a client that hangs up while the stream is being set up leaves no subscription behind', async () => {
    const { tracker } = await api.addTracker({ id: 'live-hangup' });
    const port = Number(new URL(base).port);
    await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const socket = net.connect(port, '127.0.0.1');
        await new Promise((resolve) => socket.once('connect', resolve));
        socket.write(`GET /admin/api/trackers/${tracker.id}/live HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${api.bearer}\r\n\r\n`);
        await new Promise((resolve) => setTimeout(resolve, i % 5));
        socket.destroy();
      }),
    );
    // A watcher that connects after them is set up after them (one Redis connection, in order).
    const last = await watch(tracker.id);
    last.abort();
    await waitFor(async () => (await numsub(channel(tracker.id))) === 0, { timeoutMs: 3000, message: 'every subscriber of the channel to go' });
  });
});

test('closing the runtime ends an open stream', async () => {
  const closing = await startAdminApi();
  const listening = await listen(closing.runtime.app.callback());
  try {
    const conn = await openSse(liveUrl(closing.tracker.id, listening.base), { Authorization: closing.bearer });
    expect((await conn.reader.next()).event).toBe('ready');
    let ended = false;
    void conn.reader.ended.then(() => (ended = true));
    await closing.close();
    await waitFor(() => ended, { timeoutMs: 3000, message: 'the event stream to end' });
    await expect(conn.reader.next(100)).rejects.toThrow('the event stream ended');
  } finally {
    await stop(listening.server);
  }
});
