import { createHmac, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { RequestEntry, RequestPage } from '../../../src/core/requests/request-history';
import { requestHistoryKey } from '../../../src/core/requests/request-history';
import { useAdminApi } from '../../helpers/admin-api';
import { TEST_REDIS_URL } from '../../helpers/redis';
import { waitFor } from '../../helpers/wait';

const ENTRY_BYTES = 512;
const admin = useAdminApi({ REQUEST_HISTORY_SIZE: '20', REQUEST_HISTORY_ENTRY_BYTES: String(ENTRY_BYTES), UNKNOWN_TOKEN_HISTORY_PER_MINUTE: '3' });

let n = 0;
async function newTracker() {
  return admin.api.addTracker({ id: `hist-${++n}` });
}

/** The history is written without the request waiting for it: poll until it holds `count` entries. */
async function history(url: string, count: number): Promise<RequestPage> {
  return waitFor(
    async () => {
      const res = await admin.get(url);
      expect(res.status).toBe(200);
      const page = res.body as RequestPage;
      return page.total >= count ? page : undefined;
    },
    { message: `${count} entries at ${url}` },
  );
}

describe('a tracker’s request history', () => {
  test('keeps accepted and refused requests with the reason, newest first, without tokens', async () => {
    const { tracker, token } = await newTracker();
    const http = admin.api.http;
    await http.post('/v3/event').set('Authorization', `Tracker ${token}`).set('User-Agent', 'test-agent/1').send({ _event: 'signup' }).expect(202);
    await http.post('/v3/event').set('Authorization', `Tracker ${token}`).send([{ _event: 'a' }, { plan: 'no event' }]).expect(202);
    await http.get(`/v3/event/tracker.gif?_token=${token}&_bad=1`).expect(400);
    await http.post(`/v3/user?_token=${token}`).set('Content-Type', 'application/json').send('{"_uid":').expect(400);

    const page = await history(`/trackers/${tracker.id}/requests`, 4);
    expect(page).toMatchObject({ total: 4, matched: 4 });
    const [malformed, pixel, batch, single] = page.entries as [RequestEntry, RequestEntry, RequestEntry, RequestEntry];
    expect(single).toMatchObject({ method: 'POST', endpoint: '/v3/event', path: '/v3/event', status: 202, records: 1, userAgent: 'test-agent/1', ip: expect.any(String) });
    expect(single.bytes).toBeGreaterThan(0);
    expect(single.code).toBeUndefined();
    expect(batch).toMatchObject({ status: 202, records: 1, rejected: 1, code: 'ERR_MISSING_FIELD' });
    expect(pixel).toMatchObject({ method: 'GET', endpoint: '/v3/event/tracker.gif', status: 400, code: 'ERR_RESERVED_FIELD', records: 0, query: '_token=[redacted]&_bad=1' });
    expect(pixel.message).toMatch(/_bad/);
    // Refused before the tracker was known: attributed by the token in the URL.
    expect(malformed).toMatchObject({ endpoint: '/v3/user', status: 400, code: 'ERR_MALFORMED_JSON', query: '_token=[redacted]' });
    expect(JSON.stringify(page)).not.toContain(token);
  });

  test('searches by status, code and text', async () => {
    const { tracker, token } = await newTracker();
    const http = admin.api.http;
    await http.post('/v3/event').set('Authorization', `Tracker ${token}`).send({ _event: 'checkout', plan: 'pro' }).expect(202);
    await http.post('/v3/session').set('Authorization', `Tracker ${token}`).send({}).expect(400);
    await http.post('/v3/event').set('Authorization', `Tracker ${token}`).set('User-Agent', 'FindMe/2.0').send({ _event: 'x', _secret: 1 }).expect(400);
    const url = `/trackers/${tracker.id}/requests`;
    await history(url, 3);

    const codes = async (query: string) => ((await admin.get(`${url}?${query}`)).body as RequestPage).entries.map((e) => e.code ?? e.status);
    expect(await codes('status=refused')).toEqual(['ERR_RESERVED_FIELD', 'ERR_MISSING_FIELD']);
    expect(await codes('status=2xx')).toEqual([202]);
    expect(await codes('status=202')).toEqual([202]);
    expect(await codes('code=err_missing_field')).toEqual(['ERR_MISSING_FIELD']);
    expect(await codes('text=findme')).toEqual(['ERR_RESERVED_FIELD']);
    expect(await codes('text=%2Fv3%2Fsession')).toEqual(['ERR_MISSING_FIELD']);
    expect(await codes('limit=1')).toHaveLength(1);
    expect((await admin.get(`${url}?text=findme`)).body).toMatchObject({ total: 3, matched: 1 });

    const bad = await admin.get(`${url}?status=teapot`);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'ERR_ADMIN_INVALID', field: 'query.status' });
    expect((await admin.get(`${url}?colour=red`)).body.error).toMatchObject({ code: 'ERR_ADMIN_INVALID', field: 'query.colour' });
    expect((await admin.get('/trackers/nope/requests')).status).toBe(404);
  });

  test('keeps the newest REQUEST_HISTORY_SIZE entries, each within REQUEST_HISTORY_ENTRY_BYTES', async () => {
    const { tracker, token } = await newTracker();
    const long = 'x'.repeat(5000);
    await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        admin.api.http.get(`/v3/event?_token=${token}&_event=e${i}&note=${long}`).set('User-Agent', `agent-${long}`).expect(202),
      ),
    );
    const page = await history(`/trackers/${tracker.id}/requests?limit=1000`, 20);
    expect(page.total).toBe(20);
    const redis = new Redis(TEST_REDIS_URL);
    try {
      const raw = await redis.lrange(requestHistoryKey(admin.api.prefix, tracker.id), 0, -1);
      expect(raw).toHaveLength(20);
      for (const item of raw) expect(Buffer.byteLength(item)).toBeLessThanOrEqual(ENTRY_BYTES);
    } finally {
      redis.disconnect();
    }
    expect(page.entries[0]!.query).toMatch(/^_token=\[redacted\]&_event=e\d+&note=x+…$/);
  });

  test('keeps webhook deliveries, signed or not', async () => {
    const { tracker } = await newTracker();
    const source = await admin.post(`/trackers/${tracker.id}/sources`, { type: 'github' });
    const raw = JSON.stringify({ action: 'opened' });
    const sig = `sha256=${createHmac('sha256', source.body.secret as string).update(raw).digest('hex')}`;
    const headers = { 'Content-Type': 'application/json', 'X-GitHub-Event': 'issues', 'X-GitHub-Delivery': randomUUID() };
    admin.api.runtime.resolver.clear();
    await admin.api.http.post(`/v3/webhooks/${tracker.id}/github`).set({ ...headers, 'X-Hub-Signature-256': sig }).send(raw).expect(200);
    await admin.api.http.post(`/v3/webhooks/${tracker.id}/github`).set({ ...headers, 'X-Hub-Signature-256': 'sha256=00' }).send(raw).expect(401);
    const page = await history(`/trackers/${tracker.id}/requests`, 2);
    expect(page.entries.map((e) => [e.endpoint, e.status, e.code ?? null, e.records])).toEqual([
      ['/v3/webhooks/:tracker/:source', 401, 'ERR_WEBHOOK_SIGNATURE', 0],
      ['/v3/webhooks/:tracker/:source', 200, null, 1],
    ]);
  });

  test("keeps Segment /v1 batches, with the first refused message's reason", async () => {
    const { tracker, token } = await newTracker();
    const basic = `Basic ${Buffer.from(`${token}:`).toString('base64')}`;
    await admin.api.http.post('/v1/batch').set('Authorization', basic).send({ batch: [{ type: 'track', event: 'e', anonymousId: 'a' }, { type: 'track', anonymousId: 'a' }] }).expect(200);
    await admin.api.http.post('/v1/batch').set('Authorization', basic).send({ batch: 'none' }).expect(400);
    const page = await history(`/trackers/${tracker.id}/requests`, 2);
    expect(page.entries.map((e) => [e.endpoint, e.status, e.code ?? null, e.records, e.rejected ?? 0])).toEqual([
      ['/v1/batch', 400, 'ERR_INVALID_PAYLOAD', 0, 0],
      ['/v1/batch', 200, 'ERR_MISSING_FIELD', 1, 1],
    ]);
    expect(JSON.stringify(page)).not.toContain(token);
  });
});

describe('requests with an unknown token', () => {
  test('go to the relay-wide list with a hint of the token, within the per-minute allowance', async () => {
    const unknown = `trk_${randomUUID().replaceAll('-', '')}`;
    const http = admin.api.http;
    for (let i = 0; i < 5; i++) await http.post('/v3/event').set('Authorization', `Tracker ${unknown}`).send({ _event: `e${i}` }).expect(401);
    await http.post('/v3/event').send({ _event: 'no token at all' }).expect(401);
    const page = await history('/requests/unknown-token', 3);
    // 3 a minute: the first three are kept, the others counted in the next kept entry.
    expect(page.total).toBe(3);
    expect(page.entries[0]).toMatchObject({ status: 401, code: 'ERR_INVALID_TOKEN', tokenHint: `${unknown.slice(0, 8)}…`, endpoint: '/v3/event' });
    expect(JSON.stringify(page)).not.toContain(unknown);
    expect((await admin.get(`/requests/unknown-token?text=${unknown.slice(0, 8)}`)).body.matched).toBe(3);
    // Neither list of a tracker holds them.
    const { tracker } = await newTracker();
    expect((await admin.get(`/trackers/${tracker.id}/requests`)).body.total).toBe(0);
  });
});
