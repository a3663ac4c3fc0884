import { createHmac, randomUUID } from 'node:crypto';
import { SOURCE_DELIVERIES_KEPT, sourceDeliveriesKey, type SourceDelivery } from '../../src/core/trackers/source-deliveries';
import { useAdminApi } from '../helpers/admin-api';
import { waitFor } from '../helpers/wait';

const admin = useAdminApi();

let n = 0;
/** A fresh tracker per test, so tests do not see each other's sources. */
async function tracker(): Promise<string> {
  return (await admin.api.addTracker({ id: `src-${++n}` })).tracker.id;
}

/** Ingest caches trackers for TOKEN_CACHE_TTL_MS (2 s): a change shows at once only on a cleared cache. */
const fresh = () => admin.api.runtime.resolver.clear();

const sign = (secret: string, raw: string) => `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;

/** A GitHub delivery signed with `secret`. */
function github(trackerId: string, secret: string, payload: object = { action: 'opened' }, delivery = randomUUID()) {
  const raw = JSON.stringify(payload);
  return admin.api.http
    .post(`/v3/webhooks/${trackerId}/github`)
    .set({ 'Content-Type': 'application/json', 'X-GitHub-Event': 'issues', 'X-GitHub-Delivery': delivery, 'X-Hub-Signature-256': sign(secret, raw) })
    .send(raw);
}

/** The log is written without the request waiting for it: poll until it holds `count` deliveries. */
async function deliveries(trackerId: string, count: number): Promise<SourceDelivery[]> {
  return waitFor(
    async () => {
      const res = await admin.get(`/trackers/${trackerId}/sources/github/deliveries`);
      expect(res.status).toBe(200);
      const list = res.body.deliveries as SourceDelivery[];
      return list.length >= count ? list : undefined;
    },
    { message: `${count} deliveries` },
  );
}

describe('POST and GET /trackers/:id/sources', () => {
  test('adds a source with a generated secret and its URL, lists it and shows it, the secret masked after the answer that made it', async () => {
    const id = await tracker();
    const added = await admin.post(`/trackers/${id}/sources`, { type: 'github' });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ id: 'github', type: 'github', url: `https://track.example/v3/webhooks/${id}/github`, mapping: {} });
    expect(added.body.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const list = await admin.get(`/trackers/${id}/sources`);
    expect(list.status).toBe(200);
    const masked = { ...added.body, secret: '[redacted]' };
    expect(list.body.sources).toEqual([masked]);
    expect((await admin.get(`/trackers/${id}/sources/github`)).body).toEqual(masked);
  });

  test('an hmac source with a custom mapping; a bad rule, a missing issued secret and an unknown key are refused by name', async () => {
    const id = await tracker();
    const crm = await admin.post(`/trackers/${id}/sources`, { type: 'hmac', id: 'crm', secret: 'crm-secret-1', hmac: { header: 'X-Crm-Signature' }, mapping: { _event: { header: 'X-Crm-Event', prefix: 'crm.' }, _id: { pointer: '/meta/delivery' } } });
    expect(crm.status).toBe(201);
    expect(crm.body).toMatchObject({ id: 'crm', hmac: { header: 'X-Crm-Signature', algorithm: 'sha256', encoding: 'hex' }, mapping: { _event: { header: 'X-Crm-Event', prefix: 'crm.' } } });

    const badRule = await admin.post(`/trackers/${id}/sources`, { type: 'hmac', id: 'crm2', secret: 'crm-secret-2', hmac: { header: 'X-Sig' }, mapping: { _id: { pointer: 'meta/delivery' } } });
    expect(badRule.status).toBe(400);
    expect(badRule.body.error).toMatchObject({ code: 'ERR_ADMIN_INVALID', field: 'mapping._id.pointer' });
    const noSecret = await admin.post(`/trackers/${id}/sources`, { type: 'stripe' });
    expect(noSecret.status).toBe(400);
    expect(noSecret.body.error).toMatchObject({ code: 'ERR_ADMIN_INVALID', field: 'secret', message: expect.stringMatching(/^Stripe issues the signing secret/) });
    const unknown = await admin.post(`/trackers/${id}/sources`, { type: 'github', colour: 'red' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.code).toBe('ERR_ADMIN_INVALID');
    const type = await admin.post(`/trackers/${id}/sources`, { type: 'carrier-pigeon' });
    expect(type.body.error).toMatchObject({ code: 'ERR_ADMIN_INVALID', field: 'type' });
  });

  test('a taken id is a conflict; an unknown tracker or source is a 404', async () => {
    const id = await tracker();
    await admin.post(`/trackers/${id}/sources`, { type: 'github' }).expect(201);
    const taken = await admin.post(`/trackers/${id}/sources`, { type: 'github' });
    expect(taken.status).toBe(409);
    expect(taken.body.error).toMatchObject({ code: 'ERR_ADMIN_CONFLICT', field: 'id' });
    expect((await admin.get('/trackers/nope/sources')).status).toBe(404);
    expect((await admin.post('/trackers/nope/sources', { type: 'github' })).status).toBe(404);
    const missing = await admin.get(`/trackers/${id}/sources/nope`);
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('ERR_ADMIN_NOT_FOUND');
    expect((await admin.get(`/trackers/${id}/sources/nope/deliveries`)).status).toBe(404);
  });

  test('needs the admin token', async () => {
    const id = await tracker();
    expect((await admin.api.http.get(`/admin/api/trackers/${id}/sources`)).status).toBe(401);
    expect((await admin.api.http.post(`/admin/api/trackers/${id}/sources`).send({ type: 'github' })).status).toBe(401);
  });
});

describe('PATCH, rotate-secret and DELETE /trackers/:id/sources/:source', () => {
  test('the mapping is replaced and checked; nothing else changes in place', async () => {
    const id = await tracker();
    await admin.post(`/trackers/${id}/sources`, { type: 'github' }).expect(201);
    const set = await admin.patch(`/trackers/${id}/sources/github`, { mapping: { _uid: { pointer: '/repository/owner/login' } } });
    expect(set.status).toBe(200);
    expect(set.body.mapping).toEqual({ _uid: { pointer: '/repository/owner/login', prefix: '' } });
    const bad = await admin.patch(`/trackers/${id}/sources/github`, { mapping: { _uid: { header: 'X-User', pointer: '/user' } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'ERR_ADMIN_INVALID', field: 'mapping._uid' });
    const other = await admin.patch(`/trackers/${id}/sources/github`, { mapping: {}, type: 'stripe' });
    expect(other.status).toBe(400);
    expect(other.body.error).toMatchObject({ code: 'ERR_ADMIN_INVALID', field: 'type' });
  });

  test('a rotated secret signs from now on; the previous one keeps working for the grace period only', async () => {
    const id = await tracker();
    const { secret: first } = (await admin.post(`/trackers/${id}/sources`, { type: 'github' })).body as { secret: string };
    const rotated = await admin.post(`/trackers/${id}/sources/github/rotate-secret`, { graceHours: 1 });
    expect(rotated.status).toBe(200);
    const second = rotated.body.secret as string;
    expect(second).not.toBe(first);
    expect(Date.parse(rotated.body.previousSecretUntil)).toBeGreaterThan(Date.now() + 3_500_000);
    // The previous secret is accepted, never shown again.
    expect(rotated.body).not.toHaveProperty('previousSecret');
    expect(JSON.stringify((await admin.get(`/trackers/${id}/sources/github`)).body)).not.toContain(first);
    expect((await github(id, first)).status).toBe(200);
    expect((await github(id, second)).status).toBe(200);

    const given = await admin.post(`/trackers/${id}/sources/github/rotate-secret`, { secret: 'a-secret-of-my-own', graceHours: 0 });
    // A secret the caller gave is never echoed back; a generated one is shown once.
    expect(given.body.secret).toBe('[redacted]');
    fresh();
    expect((await github(id, second)).status).toBe(401);
    expect((await github(id, 'a-secret-of-my-own')).status).toBe(200);

    const negative = await admin.post(`/trackers/${id}/sources/github/rotate-secret`, { graceHours: -1 });
    expect(negative.body.error).toMatchObject({ code: 'ERR_ADMIN_INVALID', field: 'graceHours' });
    await admin.post(`/trackers/${id}/sources`, { type: 'slack', secret: 'slack-signing-secret' }).expect(201);
    const issued = await admin.post(`/trackers/${id}/sources/slack/rotate-secret`, {});
    expect(issued.body.error).toMatchObject({ code: 'ERR_ADMIN_INVALID', field: 'secret' });
  });

  test('a removed source stops accepting deliveries (404), and its log goes with it', async () => {
    const id = await tracker();
    const { secret } = (await admin.post(`/trackers/${id}/sources`, { type: 'github' })).body as { secret: string };
    expect((await github(id, secret)).status).toBe(200);
    await deliveries(id, 1);
    const removed = await admin.del(`/trackers/${id}/sources/github`);
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({ removed: 'github' });
    fresh();
    expect((await github(id, secret)).status).toBe(404);
    expect(await admin.api.runtime.redis.exists(sourceDeliveriesKey(admin.api.prefix, id, 'github'))).toBe(0);
    expect((await admin.del(`/trackers/${id}/sources/github`)).status).toBe(404);

    await admin.post(`/trackers/${id}/sources`, { type: 'github' }).expect(201);
    expect((await admin.get(`/trackers/${id}/sources/github/deliveries`)).body).toEqual({ deliveries: [] });
  });
});

describe('GET /trackers/:id/sources/:source/deliveries', () => {
  test('each delivery with its verdict, newest first: accepted, duplicate, refused with the reason', async () => {
    const id = await tracker();
    const { secret } = (await admin.post(`/trackers/${id}/sources`, { type: 'github' })).body as { secret: string };
    const delivery = randomUUID();
    expect((await github(id, secret, { action: 'opened' }, delivery)).status).toBe(200);
    await deliveries(id, 1);
    expect((await github(id, secret, { action: 'opened' }, delivery)).status).toBe(200);
    await deliveries(id, 2);
    expect((await github(id, 'forged-secret')).status).toBe(401);
    await deliveries(id, 3);
    const unsigned = await admin.api.http.post(`/v3/webhooks/${id}/github`).set('Content-Type', 'application/json').send('{}');
    expect(unsigned.status).toBe(401);

    const list = await deliveries(id, 4);
    expect(list).toEqual([
      { at: expect.any(String), verdict: 'refused', status: 401, reason: 'missing-header', message: expect.stringMatching(/^missing-header: X-Hub-Signature-256 is missing/) },
      { at: expect.any(String), verdict: 'refused', status: 401, reason: 'bad-signature', message: expect.stringMatching(/^bad-signature: /) },
      { at: expect.any(String), verdict: 'duplicate', status: 200, event: 'github.issues.opened', id: delivery },
      { at: expect.any(String), verdict: 'accepted', status: 200, event: 'github.issues.opened', id: delivery },
    ]);
    expect(Date.parse(list[0]!.at)).toBeGreaterThanOrEqual(Date.parse(list[3]!.at));
  });

  test(`keeps the last ${SOURCE_DELIVERIES_KEPT}`, async () => {
    const id = await tracker();
    await admin.post(`/trackers/${id}/sources`, { type: 'github' }).expect(201);
    const path = `/v3/webhooks/${id}/github`;
    for (let i = 0; i < SOURCE_DELIVERIES_KEPT + 5; i++) await admin.api.http.post(path).set('Content-Type', 'application/json').send('{}');
    // The log is written on the API's own connection, in order: after the last answer, the reads below see every write.
    expect(await admin.api.runtime.redis.llen(sourceDeliveriesKey(admin.api.prefix, id, 'github'))).toBe(SOURCE_DELIVERIES_KEPT);
    expect((await admin.get(`/trackers/${id}/sources/github/deliveries`)).body.deliveries).toHaveLength(SOURCE_DELIVERIES_KEPT);
  });
});
