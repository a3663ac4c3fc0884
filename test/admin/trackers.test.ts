import { useAdminApi } from '../helpers/admin-api';

const admin = useAdminApi();

const { get, post, patch, del } = admin;

describe('GET /trackers', () => {
  test('lists every tracker', async () => {
    const res = await get('/trackers');
    expect(res.status).toBe(200);
    expect(res.body.trackers.map((t: { id: string }) => t.id)).toContain(admin.api.tracker.id);
    expect(res.body.unreadable).toEqual([]);
  });

  test('a tracker the relay cannot read is listed apart with why, and answers a 500 that says so', async () => {
    const { redis } = admin.api.runtime;
    await redis.set(`${admin.api.prefix}:tracker:hand-edited`, JSON.stringify({ id: 'hand-edited', name: 'Edited', tokens: [], destinations: 'oops' }));
    await redis.sadd(`${admin.api.prefix}:trackers`, 'hand-edited');
    const res = await get('/trackers');
    expect(res.status).toBe(200);
    expect(res.body.trackers.map((t: { id: string }) => t.id)).toContain(admin.api.tracker.id);
    expect(res.body.unreadable).toEqual([{ id: 'hand-edited', reason: expect.stringMatching(/^its stored JSON is not a tracker \(.*destinations: .*\)$/) }]);
    const one = await get('/trackers/hand-edited');
    expect(one.status).toBe(500);
    expect(one.body.error.message).toMatch(/^tracker hand-edited cannot be read: its stored JSON is not a tracker .*; see docs\/operating\.md, “Trackers that cannot be read”$/);
    await redis.srem(`${admin.api.prefix}:trackers`, 'hand-edited');
  });
});

describe('POST /trackers', () => {
  test('creates a tracker with its first token and integration view', async () => {
    const res = await post('/trackers', { name: 'My Shop (EU)', timeZone: 'Europe/Paris' });
    expect(res.status).toBe(201);
    expect(res.body.tracker).toMatchObject({ id: 'my-shop-eu', name: 'My Shop (EU)', timeZone: 'Europe/Paris' });
    expect(res.body.token).toMatch(/^trk_/);
    expect(res.body.integration).toMatchObject({ trackerId: 'my-shop-eu', baseUrl: 'https://track.example', token: res.body.token });
    const sent = await admin.api.http.post('/v3/event').set('Authorization', `Tracker ${res.body.token}`).send({ _event: 'signup' });
    expect(sent.status).toBe(202);
  });

  test('an unknown key is refused by name', async () => {
    const res = await post('/trackers', { name: 'x', colour: 'red' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'ERR_ADMIN_INVALID', field: 'colour' });
  });

  test('a taken id is a conflict', async () => {
    const res = await post('/trackers', { name: 'again', id: admin.api.tracker.id });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'ERR_ADMIN_CONFLICT', field: 'id' });
  });
});

describe('DELETE /trackers/:id', () => {
  test('removes a tracker and says what was discarded; then it is a 404, and its token a 401', async () => {
    const made = await post('/trackers', { name: 'Short lived', id: 'short-lived' });
    expect(made.status).toBe(201);
    await post('/trackers/short-lived/destinations', { type: 'local', id: 'wh' }).expect(201);
    const removed = await del('/trackers/short-lived');
    expect({ status: removed.status, body: removed.body }).toEqual({ status: 200, body: { removed: 'short-lived', destinations: ['wh'], discarded: { queued: 0, deadLetters: 0, backlog: 0 }, revoked: { people: 0, tokens: 0 } } });
    expect((await get('/trackers/short-lived')).status).toBe(404);
    expect((await get('/trackers')).body.trackers.map((t: { id: string }) => t.id)).not.toContain('short-lived');
    expect((await admin.api.http.post('/v3/event').set('Authorization', `Tracker ${made.body.token}`).send({ _event: 'x' })).status).toBe(401);
    const again = await del('/trackers/short-lived');
    expect({ status: again.status, code: again.body.error.code, message: again.body.error.message }).toEqual({ status: 404, code: 'ERR_ADMIN_NOT_FOUND', message: 'No tracker with id "short-lived".' });
  });

  test('a tracker the relay cannot read can be removed', async () => {
    const { redis } = admin.api.runtime;
    await redis.set(`${admin.api.prefix}:tracker:unreadable-gone`, '{"id":"unreadable-gone","tokens":');
    await redis.sadd(`${admin.api.prefix}:trackers`, 'unreadable-gone');
    expect((await del('/trackers/unreadable-gone')).body).toEqual({ removed: 'unreadable-gone', destinations: [], discarded: { queued: 0, deadLetters: 0, backlog: 0 }, revoked: { people: 0, tokens: 0 } });
    expect((await get('/trackers')).body.unreadable).toEqual([]);
  });
});

describe('request bodies', () => {
  test('must be JSON objects of at most 64 KiB', async () => {
    const text = await admin.api.http.post('/admin/api/trackers').set('Authorization', admin.api.bearer).set('Content-Type', 'text/plain').send('{"name":"x"}');
    expect(text.status).toBe(415);
    const malformed = await admin.api.http.post('/admin/api/trackers').set('Authorization', admin.api.bearer).set('Content-Type', 'application/json').send('{"name":');
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe('ERR_MALFORMED_JSON');
    const array = await admin.api.http.post('/admin/api/trackers').set('Authorization', admin.api.bearer).set('Content-Type', 'application/json').send('[]');
    expect(array.status).toBe(400);
    expect(array.body.error.code).toBe('ERR_ADMIN_INVALID');
    const large = await post('/trackers', { name: 'x'.repeat(70_000) });
    expect(large.status).toBe(413);
    expect(large.body.error.code).toBe('ERR_PAYLOAD_TOO_LARGE');
  });
});

describe('GET /trackers/:id', () => {
  test('answers the tracker', async () => {
    const res = await get(`/trackers/${admin.api.tracker.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: admin.api.tracker.id, tokens: [{ token: admin.api.token }] });
  });

  test('an unknown id is a 404', async () => {
    const res = await get('/trackers/nope');
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ code: 'ERR_ADMIN_NOT_FOUND', field: 'id' });
  });
});

describe('PATCH /trackers/:id', () => {
  test('changes the given fields only', async () => {
    const { tracker } = await admin.api.addTracker({ id: 'patch-me', name: 'Before' });
    const res = await patch(`/trackers/${tracker.id}`, { name: 'After', corsOrigins: ['https://shop.example'], rateLimit: { recordsPerSecond: 5 }, captureContext: true });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: 'patch-me', name: 'After', timeZone: 'UTC', corsOrigins: ['https://shop.example'], rateLimit: { recordsPerSecond: 5 }, captureContext: true });
  });

  test('an invalid value is refused by name', async () => {
    const res = await patch(`/trackers/${admin.api.tracker.id}`, { timeZone: 'Mars/Olympus' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'ERR_ADMIN_INVALID', field: 'timeZone' });
  });
});

describe('tokens', () => {
  test('rotate adds a token; revoke by prefix marks the old one revoked', async () => {
    const { tracker, token: old } = await admin.api.addTracker({ id: 'rotate-me' });
    const rotated = await post(`/trackers/${tracker.id}/tokens`);
    expect(rotated.status).toBe(201);
    expect(rotated.body.token).toMatch(/^trk_/);
    expect(rotated.body.tracker.tokens).toHaveLength(2);

    const revoked = await del(`/trackers/${tracker.id}/tokens/${old.slice(0, 8)}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ alreadyRevoked: false, revoked: { token: old, revokedAt: expect.any(String) } });

    const last = await del(`/trackers/${tracker.id}/tokens/${rotated.body.token}`);
    expect(last.status).toBe(409);
    expect(last.body.error).toMatchObject({ code: 'ERR_ADMIN_CONFLICT', field: 'token' });
  });

  test('a short prefix is invalid, an unknown token not found', async () => {
    const short = await del(`/trackers/${admin.api.tracker.id}/tokens/trk_`);
    expect(short.status).toBe(400);
    expect(short.body.error).toMatchObject({ code: 'ERR_ADMIN_INVALID', field: 'token' });
    const unknown = await del(`/trackers/${admin.api.tracker.id}/tokens/trk_zzzzzzzzzz`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: 'ERR_ADMIN_NOT_FOUND', field: 'token' });
  });

  test('rotating on an unknown tracker is a 404', async () => {
    expect((await post('/trackers/nope/tokens')).status).toBe(404);
  });
});

describe('GET /trackers/:id/integration', () => {
  test('is the structured view with the first active token and the public URL', async () => {
    const res = await get(`/trackers/${admin.api.tracker.id}/integration`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ trackerId: admin.api.tracker.id, baseUrl: 'https://track.example', token: admin.api.token, authorizationHeader: `Tracker ${admin.api.token}` });
    expect(res.body.endpoints.map((e: { kind: string }) => e.kind)).toEqual(['user', 'session', 'event']);
    expect(res.body.curl.length).toBeGreaterThan(0);
    expect(res.body.pixelSnippet).toContain('https://track.example/v3/event/tracker.gif');
    expect(res.body.segment).toMatchObject({ endpoint: 'https://track.example/v1', writeKey: admin.api.token, apiHost: 'track.example/v1' });
    const python = res.body.segment.snippets.find((s: { sdk: string }) => s.sdk === 'analytics-python');
    expect(python.code).toBe(`import segment.analytics as analytics\n\nanalytics.write_key = "${admin.api.token}"\nanalytics.host = "https://track.example"`);
  });

  test('an unknown tracker is a 404', async () => {
    expect((await get('/trackers/nope/integration')).status).toBe(404);
  });
});
