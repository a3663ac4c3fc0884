import { Redis } from 'ioredis';
import { TrackerResolver } from '../../src/ingest/resolver';
import { slugify, TrackerService, TrackerServiceError, type TrackerServiceErrorCode } from '../../src/operator/tracker-service';
import { TrackerStore } from '../../src/core/trackers/store';
import { activeTokens, TrackerSchema } from '../../src/core/trackers/types';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis';

const prefix = uniquePrefix('svc');
const redis = new Redis(TEST_REDIS_URL);
const store = new TrackerStore(redis, prefix);
let now = Date.parse('2024-05-01T12:00:00Z');
const service = new TrackerService(store, () => now);
const resolver = new TrackerResolver(store, 0);

afterAll(async () => {
  redis.disconnect();
  await deletePrefix(prefix);
});

async function expectServiceError(promise: Promise<unknown>, code: TrackerServiceErrorCode, field?: string): Promise<TrackerServiceError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TrackerServiceError);
  const serviceError = err as TrackerServiceError;
  expect(serviceError.code).toBe(code);
  if (field !== undefined) {
    expect(serviceError.field).toBe(field);
    expect(serviceError.message).toContain(field);
  }
  return serviceError;
}

describe('slugify', () => {
  test.each([
    ['Ma Boutique (EU)', 'ma-boutique-eu'],
    ['Café Été', 'cafe-ete'],
    ['  --Shop--  ', 'shop'],
    ['!!!', 'tracker'],
    ['日本', 'tracker'],
  ])('%s → %s', (name, slug) => expect(slugify(name)).toBe(slug));

  test('a long name still leaves room for a -N suffix within the id limit', () => {
    const slug = slugify('a very long tracker name '.repeat(10));
    expect(slug.length).toBeLessThanOrEqual(56);
    expect(slug.endsWith('-')).toBe(false);
    expect(() => TrackerSchema.shape.id.parse(`${slug}-99`)).not.toThrow();
  });
});

describe('createTracker', () => {
  test('derives the id from the name, generates a token and indexes it', async () => {
    const { tracker, token } = await service.createTracker({ name: 'Web Shop' });
    expect(tracker).toMatchObject({ id: 'web-shop', name: 'Web Shop', timeZone: 'UTC', corsOrigins: ['*'], rateLimit: null, captureContext: false, createdAt: '2024-05-01T12:00:00.000Z' });
    expect(token).toMatch(/^trk_[A-Za-z0-9_-]{43}$/);
    expect(tracker.tokens).toEqual([{ token, createdAt: '2024-05-01T12:00:00.000Z' }]);
    expect(await store.get('web-shop')).toEqual(tracker);
    expect((await resolver.resolve(token))?.id).toBe('web-shop');
  });

  test('makes derived ids unique', async () => {
    const second = await service.createTracker({ name: 'Web shop' });
    const third = await service.createTracker({ name: 'web-shop!' });
    expect([second.tracker.id, third.tracker.id]).toEqual(['web-shop-2', 'web-shop-3']);
    expect(new Set([second.token, third.token]).size).toBe(2);
  });

  test('takes every option', async () => {
    const { tracker } = await service.createTracker({
      name: '  Paris  ',
      id: 'paris',
      timeZone: 'Europe/Paris',
      corsOrigins: ['https://shop.example', 'http://localhost:3000'],
      rateLimit: { recordsPerSecond: 50, burst: 200 },
      captureContext: true,
    });
    expect(tracker).toMatchObject({ id: 'paris', name: 'Paris', timeZone: 'Europe/Paris', corsOrigins: ['https://shop.example', 'http://localhost:3000'], rateLimit: { recordsPerSecond: 50, burst: 200 }, captureContext: true });
    expect(await store.get('paris')).toEqual(tracker);
  });

  test('refuses a taken id', async () => {
    await expectServiceError(service.createTracker({ name: 'Other', id: 'paris' }), 'ID_TAKEN', 'id');
    expect((await store.get('paris'))?.name).toBe('Paris');
  });

  test.each([
    [{ name: '' }, 'name'],
    [{ name: 'x', id: 'Not An Id' }, 'id'],
    [{ name: 'x', timeZone: 'Mars/Olympus' }, 'timeZone'],
    [{ name: 'x', corsOrigins: ['*', 'https://shop.example/'] }, 'corsOrigins.1'],
    [{ name: 'x', corsOrigins: ['shop.example'] }, 'corsOrigins.0'],
    [{ name: 'x', rateLimit: { recordsPerSecond: 0 } }, 'rateLimit.recordsPerSecond'],
    [{ name: 'x', rateLimit: { recordsPerSecond: 5, burst: 1.5 } }, 'rateLimit.burst'],
  ])('refuses %j naming %s', async (input, field) => {
    await expectServiceError(service.createTracker(input), 'INVALID_INPUT', field);
  });

  test('refuses input of the wrong shape from an untyped caller (the JSON API)', async () => {
    const untyped = JSON.parse('{"name": 42}') as { name: string };
    await expectServiceError(service.createTracker(untyped), 'INVALID_INPUT', 'name');
    const typo = JSON.parse('{"name": "x", "timezone": "UTC"}') as { name: string };
    await expectServiceError(service.createTracker(typo), 'INVALID_INPUT', 'timezone');
  });
});

describe('listTrackers and getTracker', () => {
  test('lists every tracker, sorted by id', async () => {
    const ids = (await service.listTrackers()).trackers.map((t) => t.id);
    expect(ids).toEqual(['paris', 'web-shop', 'web-shop-2', 'web-shop-3']);
  });

  test('gets one, or says which id is unknown', async () => {
    expect((await service.getTracker('paris')).name).toBe('Paris');
    const err = await expectServiceError(service.getTracker('nope'), 'TRACKER_NOT_FOUND', 'id');
    expect(err.message).toContain('nope');
    await expectServiceError(service.getTracker('web-shop:anything'), 'TRACKER_NOT_FOUND', 'id');
  });
});

describe('updateTracker', () => {
  test('changes the given fields and keeps the others', async () => {
    const updated = await service.updateTracker('paris', { name: 'Paris FR', timeZone: undefined, corsOrigins: ['*'], captureContext: false });
    expect(updated).toMatchObject({ name: 'Paris FR', timeZone: 'Europe/Paris', corsOrigins: ['*'], captureContext: false, rateLimit: { recordsPerSecond: 50, burst: 200 } });
    expect(await store.get('paris')).toEqual(updated);
  });

  test('sets and clears the rate limit', async () => {
    expect((await service.updateTracker('paris', { rateLimit: { recordsPerSecond: 10 } })).rateLimit).toEqual({ recordsPerSecond: 10 });
    expect((await service.updateTracker('paris', { rateLimit: null })).rateLimit).toBeNull();
    expect((await store.get('paris'))?.rateLimit).toBeNull();
  });

  test('refuses invalid values and leaves the tracker as it was', async () => {
    const before = await store.get('paris');
    await expectServiceError(service.updateTracker('paris', { timeZone: 'Europe/Atlantis' }), 'INVALID_INPUT', 'timeZone');
    await expectServiceError(service.updateTracker('paris', { name: '' }), 'INVALID_INPUT', 'name');
    await expectServiceError(service.updateTracker('paris', { id: 'other' } as never), 'INVALID_INPUT', 'id');
    expect(await store.get('paris')).toEqual(before);
  });

  test('refuses an unknown tracker', async () => {
    await expectServiceError(service.updateTracker('nope', { name: 'x' }), 'TRACKER_NOT_FOUND', 'id');
  });
});

describe('rotateToken and revokeToken', () => {
  test('rotation adds a token and keeps the old one working', async () => {
    const { tracker, token: first } = await service.createTracker({ name: 'Rotating' });
    now += 60_000;
    const rotated = await service.rotateToken(tracker.id);
    expect(rotated.token).not.toBe(first);
    expect(activeTokens(rotated.tracker).map((t) => t.token)).toEqual([first, rotated.token]);
    expect(rotated.tracker.tokens[1]?.createdAt).toBe(new Date(now).toISOString());
    expect((await resolver.resolve(first))?.id).toBe(tracker.id);
    expect((await resolver.resolve(rotated.token))?.id).toBe(tracker.id);
  });

  test('revoking by prefix stops the old token and keeps the new one', async () => {
    const tracker = await service.getTracker('rotating');
    const [old, fresh] = tracker.tokens.map((t) => t.token) as [string, string];
    now += 60_000;
    const result = await service.revokeToken('rotating', old.slice(0, 12));
    expect(result.alreadyRevoked).toBe(false);
    expect(result.revoked).toMatchObject({ token: old, revokedAt: new Date(now).toISOString() });
    expect(activeTokens(result.tracker).map((t) => t.token)).toEqual([fresh]);
    expect(await resolver.resolve(old)).toBeUndefined();
    expect((await resolver.resolve(fresh))?.id).toBe('rotating');
  });

  test('revoking a revoked token again changes nothing', async () => {
    const tracker = await service.getTracker('rotating');
    const old = tracker.tokens[0]!;
    const again = await service.revokeToken('rotating', old.token);
    expect(again).toMatchObject({ alreadyRevoked: true, revoked: { token: old.token, revokedAt: old.revokedAt } });
    expect(await store.get('rotating')).toEqual(tracker);
  });

  test('refuses to revoke the last active token', async () => {
    const tracker = await service.getTracker('rotating');
    const last = activeTokens(tracker)[0]!.token;
    const err = await expectServiceError(service.revokeToken('rotating', last), 'LAST_TOKEN', 'token');
    expect(err.message).toMatch(/last active token.*rotate-token/);
    expect((await resolver.resolve(last))?.id).toBe('rotating');
  });

  test('refuses unknown, too short and ambiguous prefixes, and unknown trackers', async () => {
    await expectServiceError(service.revokeToken('rotating', 'trk_doesnotexist'), 'TOKEN_NOT_FOUND', 'token');
    await expectServiceError(service.revokeToken('rotating', 'trk_'), 'INVALID_INPUT', 'token');
    await expectServiceError(service.revokeToken('nope', 'trk_whatever'), 'TRACKER_NOT_FOUND', 'id');

    const twins = TrackerSchema.parse({ id: 'twins', name: 'Twins', tokens: [{ token: 'trk_sameprefix_aaaaaaaaaaaaaaaa' }, { token: 'trk_sameprefix_bbbbbbbbbbbbbbbb' }] });
    await store.save(twins);
    await expectServiceError(service.revokeToken('twins', 'trk_sameprefix'), 'TOKEN_AMBIGUOUS', 'token');
    expect((await service.revokeToken('twins', 'trk_sameprefix_b')).revoked.token).toBe('trk_sameprefix_bbbbbbbbbbbbbbbb');
  });

  test('concurrent rotations of one tracker lose no token', async () => {
    const { tracker } = await service.createTracker({ name: 'Busy' });
    const rotations = await Promise.all(Array.from({ length: 5 }, () => service.rotateToken(tracker.id)));
    const stored = await service.getTracker(tracker.id);
    expect(stored.tokens).toHaveLength(6);
    for (const r of rotations) expect((await resolver.resolve(r.token))?.id).toBe(tracker.id);
  });

  test('a failed mutation does not block the next one', async () => {
    await expectServiceError(service.updateTracker('busy', { timeZone: 'nowhere' }), 'INVALID_INPUT', 'timeZone');
    expect((await service.updateTracker('busy', { name: 'Still busy' })).name).toBe('Still busy');
  });
});
