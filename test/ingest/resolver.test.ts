import { Redis } from 'ioredis';
import { TrackerStore } from '../../src/core/trackers/store';
import { generateToken } from '../../src/core/trackers/tokens';
import { TrackerSchema } from '../../src/core/trackers/types';
import { TrackerResolver } from '../../src/ingest/resolver';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis';

/** Token → tracker on the request path, cached by token in memory, trackers by id apart. */
const prefix = uniquePrefix('resolver');
const redis = new Redis(TEST_REDIS_URL);
const store = new TrackerStore(redis, prefix);
const token = generateToken();

beforeAll(async () => {
  await store.save(TrackerSchema.parse({ id: 'shop', name: 'Shop', tokens: [{ token }] }));
});
afterAll(async () => {
  await deletePrefix(prefix);
  redis.disconnect();
});

test('a token resolves to its tracker, a cached answer lasts its TTL, and a revoked token stops working after it', async () => {
  let now = 0;
  const resolver = new TrackerResolver(store, 1000, () => now);
  expect((await resolver.resolve(token))?.id).toBe('shop');
  expect(await resolver.resolve(`${token}x`)).toBeUndefined();
  await store.update('shop', (t) => ({ ...t, tokens: [{ token: generateToken(), createdAt: new Date().toISOString() }] }));
  expect((await resolver.resolve(token))?.id).toBe('shop');
  now += 1001;
  expect(await resolver.resolve(token)).toBeUndefined();
});

test('a token that spells a tracker id is not taken for the tracker cached by id', async () => {
  const resolver = new TrackerResolver(store, 60_000);
  expect((await resolver.byId('shop'))?.id).toBe('shop');
  for (const guess of ['shop', 'id:shop']) expect(await resolver.resolve(guess)).toBeUndefined();
  expect((await resolver.byId('shop'))?.id).toBe('shop');
});

test('requests asking at once share one lookup', async () => {
  const resolver = new TrackerResolver(store, 60_000);
  const spy = jest.spyOn(store, 'trackerIdForToken');
  const answers = await Promise.all(Array.from({ length: 5 }, () => resolver.resolve(generateToken())));
  expect(answers.every((a) => a === undefined)).toBe(true);
  expect(spy).toHaveBeenCalledTimes(5);
  spy.mockClear();
  const same = generateToken();
  await Promise.all(Array.from({ length: 5 }, () => resolver.resolve(same)));
  expect(spy).toHaveBeenCalledTimes(1);
  spy.mockRestore();
});
