import { Redis } from 'ioredis';
import type { RedisClient } from '../../../src/core/redis/cluster';
import { ERROR_CODES } from '../../../src/core/errors';
import { bucketExpiresAt, bucketOf, HOUR_MS, MINUTE_MS, WINDOW_MINUTES } from '../../../src/core/series/minutes';
import { trafficKey, TrafficReader, type TrafficPicture } from '../../../src/core/series/traffic';
import { SERIES_PER_MINUTE, TrafficCounter } from '../../../src/http/traffic/traffic-counter';
import type { TrackerResolver } from '../../../src/ingest/resolver';
import { useAdminApi } from '../../helpers/admin-api';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../../helpers/redis';
import { waitFor } from '../../helpers/wait';

// Nothing is sent by the timer during a test: each test flushes when it wants the counts in Redis.
const admin = useAdminApi({ TRAFFIC_FLUSH_MS: '600000' });

async function keysUnder(redis: RedisClient, pattern: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    keys.push(...found);
  } while (cursor !== '0');
  return keys;
}

/** Series totals as `endpoint outcome` → records, whatever minute they fell in. */
function totalsBySeries(picture: TrafficPicture): Record<string, number> {
  return Object.fromEntries(picture.series.map((s) => [`${s.endpoint} ${s.outcome}`, s.total]));
}

describe('a tracker’s records per minute', () => {
  test('are counted by endpoint and outcome in process memory, and reach Redis only when flushed', async () => {
    const { tracker, token } = await admin.api.addTracker({ id: 'traffic-1' });
    const http = admin.api.http;
    const auth = `Tracker ${token}`;
    await http.post('/v3/event').set('Authorization', auth).send({ _event: 'signup' }).expect(202);
    await http.post('/v3/event').set('Authorization', auth).send([{ _event: 'a' }, { plan: 'no event' }]).expect(202);
    await http.post('/v3/session').set('Authorization', auth).send({ _uid: 'u1' }).expect(400);
    await http.get(`/v3/event/tracker.gif?_token=${token}&_event=view`).expect(200);
    await http.post('/v3/event').set('Authorization', auth).send({ _event: 'paid', _id: 'order-1' }).expect(202);
    await http.post('/v3/event').set('Authorization', auth).send({ _event: 'paid', _id: 'order-1' }).expect(200);
    // The whole request refused: both of its records count under the request's code.
    await http.post('/v3/event').set('Authorization', auth).set('Idempotency-Key', 'has space').send([{ _event: 'x' }, { _event: 'y' }]).expect(400);
    // Refused before the body was read: filed under the tracker of the header's token, as one.
    await http.post('/v3/user').set('Authorization', auth).set('Content-Type', 'application/json').send('{"_uid":').expect(400);
    // A token of no tracker is nobody's traffic.
    await http.post('/v3/event').set('Authorization', 'Tracker trk_unknown').send({ _event: 'x' }).expect(401);

    const redis = admin.api.runtime.redis;
    const pattern = `${admin.api.prefix}:traffic:*`;
    // The late attribution of the malformed body resolves its token first.
    await waitFor(async () => (await admin.api.runtime.resolver.resolve(token)) !== undefined);
    expect(await keysUnder(redis, pattern)).toEqual([]);
    await admin.api.runtime.traffic.flush();
    const keys = await keysUnder(redis, pattern);
    expect(keys.length).toBeGreaterThanOrEqual(1);
    expect(keys.every((k) => k.startsWith(`${admin.api.prefix}:traffic:${tracker.id}:`))).toBe(true);
    for (const key of keys) expect(await redis.call('EXPIRETIME', key)).toBe(bucketExpiresAt(Number(key.split(':').pop())));

    const res = await admin.get(`/trackers/${tracker.id}/traffic`).expect(200);
    const picture = res.body as TrafficPicture;
    expect(totalsBySeries(picture)).toEqual({
      '/v3/event accepted': 3,
      '/v3/event duplicate': 1,
      '/v3/event ERR_MISSING_FIELD': 1,
      '/v3/event ERR_INVALID_FIELD': 2,
      '/v3/session ERR_MISSING_FIELD': 1,
      '/v3/event/tracker.gif accepted': 1,
      '/v3/user ERR_MALFORMED_JSON': 1,
    });
    expect(picture.totals).toEqual({ accepted: 4, duplicate: 1, refused: 5 });
    expect(picture.stepSeconds).toBe(60);
    expect(picture.series.every((s) => s.counts.length === WINDOW_MINUTES)).toBe(true);
    // The last point is the current minute.
    const last = Date.parse(picture.start) + (WINDOW_MINUTES - 1) * MINUTE_MS;
    expect(Math.floor(Date.now() / MINUTE_MS) * MINUTE_MS - last).toBeLessThanOrEqual(MINUTE_MS);

    await admin.get('/trackers/no-such-tracker/traffic').expect(404);
  });

  test("Segment's /v1 batches count their messages, and their refused ones by code", async () => {
    const { tracker, token } = await admin.api.addTracker({ id: 'traffic-segment' });
    const basic = `Basic ${Buffer.from(`${token}:`).toString('base64')}`;
    await admin.api.http
      .post('/v1/batch')
      .set('Authorization', basic)
      .send({ batch: [{ type: 'track', event: 'a', anonymousId: 'x' }, { type: 'track', event: 'b', anonymousId: 'x' }, { type: 'track', anonymousId: 'x' }] })
      .expect(200);
    await admin.api.runtime.traffic.flush();
    const picture = (await admin.get(`/trackers/${tracker.id}/traffic`).expect(200)).body as TrafficPicture;
    expect(totalsBySeries(picture)).toEqual({ '/v1/batch accepted': 2, '/v1/batch ERR_MISSING_FIELD': 1 });
  });
});

describe('the counts in Redis', () => {
  const prefix = uniquePrefix('traffic');
  const redis = new Redis(TEST_REDIS_URL);
  const resolver = {} as TrackerResolver;
  // Now: the buckets written expire in real time.
  const t0 = Date.now();
  const clock = t0;
  const counter = (extra: Partial<ConstructorParameters<typeof TrafficCounter>[0]> = {}) => new TrafficCounter({ redis, redisPrefix: prefix, resolver, flushMs: 600_000, now: () => clock, ...extra });
  const reader = new TrafficReader(redis, prefix);

  afterAll(async () => {
    await deletePrefix(prefix);
    redis.disconnect();
  });

  test('cover the last 24 hours, the current minute included; older hours are outside the window and expire', async () => {
    const c = counter();
    c.count('win', '/v3/event', [['accepted', 1]], t0 - 24 * HOUR_MS);
    c.count('win', '/v3/event', [['accepted', 2]], t0 - 24 * HOUR_MS + MINUTE_MS);
    c.count('win', '/v3/event', [['accepted', 3], ['ERR_MISSING_FIELD', 4]], t0);
    await c.flush();
    const picture = await reader.read('win', t0);
    expect(picture.start).toBe(new Date(Math.floor((t0 - 24 * HOUR_MS + MINUTE_MS) / MINUTE_MS) * MINUTE_MS).toISOString());
    const accepted = picture.series.find((s) => s.outcome === 'accepted')!;
    expect(accepted.counts[0]).toBe(2);
    expect(accepted.counts[WINDOW_MINUTES - 1]).toBe(3);
    expect(accepted.total).toBe(5);
    expect(picture.totals).toEqual({ accepted: 5, duplicate: 0, refused: 4 });
    // The minute 24 h back is outside the window; its bucket expires once no window needs it.
    const oldest = trafficKey(prefix, 'win', bucketOf(t0 - 24 * HOUR_MS));
    expect(Number(await redis.call('EXPIRETIME', oldest)) * 1000).toBeLessThanOrEqual(t0 + 10 * MINUTE_MS + MINUTE_MS);
  });

  test('keep at most 19 fields a minute per tracker, however many endpoints and codes a client tries', async () => {
    const c = counter();
    for (let i = 0; i < 60; i++) c.count('cap', `/v3/endpoint-${i % 12}`, [[i % 2 ? 'accepted' : `ERR_CODE_${i}`, 1]], t0);
    await c.flush();
    const fields = await redis.hkeys(trafficKey(prefix, 'cap', bucketOf(t0)));
    expect(fields.length).toBeLessThanOrEqual(SERIES_PER_MINUTE + 3);
    const picture = await reader.read('cap', t0);
    // Nothing is lost: past the cap, records are counted under `other`.
    expect(picture.totals.accepted + picture.totals.refused).toBe(60);
    expect(picture.series.some((s) => s.endpoint === 'other')).toBe(true);
  });

  test('are kept in process while Redis is down and sent once it is back', async () => {
    let up = false;
    const c = counter({ isConnected: () => up });
    c.count('outage', '/v3/event', [['ERR_QUEUE_UNAVAILABLE', 7]], t0);
    await c.flush();
    expect(await redis.exists(trafficKey(prefix, 'outage', bucketOf(t0)))).toBe(0);
    up = true;
    await c.flush();
    expect((await reader.read('outage', t0)).totals.refused).toBe(7);
  });

  test('take bounded memory: a day of a typical tracker, and the worst a client can make', async () => {
    const usage = async (id: string) => {
      const keys = await keysUnder(redis, `${prefix}:traffic:${id}:*`);
      let bytes = 0;
      for (const key of keys) bytes += Number(await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
      return { keys: keys.length, bytes };
    };
    const day = async (id: string, perMinute: (minute: number) => Array<[string, string]>) => {
      const c = counter();
      // 25 hours, oldest first, sent bucket by bucket as a running process would.
      for (let m = WINDOW_MINUTES + 59; m >= 0; m--) {
        const at = t0 - m * MINUTE_MS;
        for (const [endpoint, outcome] of perMinute(m)) c.count(id, endpoint, [[outcome, 1 + (m % 500)]], at);
        if (m % 10 === 0) await c.flush();
      }
      await c.flush();
      return usage(id);
    };
    // Events by POST, a pixel, and a refusal now and then.
    const typical = await day('typical', (m) => [['/v3/event', 'accepted'], ['/v3/event/tracker.gif', 'accepted'], ...(m % 3 === 0 ? ([['/v3/event', 'ERR_MISSING_FIELD']] as Array<[string, string]>) : [])]);
    // Every endpoint with every refusal a tracker's client can provoke: the cap of 19 fields a minute, all minutes.
    const endpoints = ['/v3/event', '/v3/user', '/v3/session', '/v3/event/tracker.gif', '/v3/event/tracker.js', '/v3/user/tracker.gif', '/v3/user/tracker.js', '/v3/session/tracker.gif', '/v3/session/tracker.js', '/v3/webhooks/:tracker/:source', 'unmatched'];
    const codes = Object.keys(ERROR_CODES);
    const worst = await day('worst', () => Array.from({ length: 40 }, (_, i): [string, string] => [endpoints[i % endpoints.length]!, codes[i % codes.length]!]));
    // Buckets that ended more than 24 hours ago have expired already.
    expect(typical.keys).toBeGreaterThanOrEqual(145);
    expect(typical.keys).toBeLessThanOrEqual(146);
    // Measured on Redis 7.0: about 124 KB and 1.0 MB (docs/traffic.md, "Pictures over time").
    expect(typical.bytes).toBeLessThan(192 * 1024);
    expect(worst.bytes).toBeLessThan(1.5 * 1024 * 1024);
  });
});
