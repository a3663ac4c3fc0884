import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { LuaScript } from '../../../src/core/redis/lua-script';
import { OwnRedis } from '../../helpers/redis-server';

/**
 * Scripts run by their SHA1 and are sent whole only when Redis lacks them. A Redis of the test's
 * own: SCRIPT FLUSH and a restart empty the script cache of every client of that server.
 */
const ECHO = new LuaScript(`redis.call('SET', KEYS[1], ARGV[1]) return {KEYS[1], ARGV[1], ARGV[2]}`);
const sha = createHash('sha1').update(ECHO.lua).digest('hex');

let own: OwnRedis;
let redis: Redis;
beforeAll(async () => {
  own = await OwnRedis.start();
  redis = new Redis(own.url, { maxRetriesPerRequest: null });
});
afterAll(async () => {
  redis.disconnect();
  await own.destroy();
});

async function calls(): Promise<Record<string, number>> {
  const info = await redis.info('commandstats');
  return Object.fromEntries([...info.matchAll(/cmdstat_(eval|evalsha):calls=(\d+)/g)].map((m) => [m[1]!, Number(m[2])]));
}

test('runs with its keys and arguments, then by SHA1 alone', async () => {
  await redis.config('RESETSTAT');
  expect(await ECHO.run(redis, 1, 'k', 'a', Buffer.from('b'))).toEqual(['k', 'a', 'b']);
  expect(await redis.get('k')).toBe('a');
  for (let i = 0; i < 5; i++) await ECHO.run(redis, 1, 'k', String(i), '');
  expect(await redis.script('EXISTS', sha)).toEqual([1]);
  // The text went once, on this connection's first call; every later call named the SHA1.
  expect(await calls()).toEqual({ eval: 1, evalsha: 5 });
});

test('a Redis that lost its scripts (SCRIPT FLUSH, a restart) is sent the text again, and the call answers', async () => {
  await ECHO.run(redis, 1, 'k', 'before', '');
  await redis.script('FLUSH');
  expect(await ECHO.run(redis, 1, 'k', 'after flush', '')).toEqual(['k', 'after flush', '']);
  await own.stop();
  await own.resume();
  expect(await ECHO.run(redis, 1, 'k', 'after restart', '')).toEqual(['k', 'after restart', '']);
  expect(await redis.get('k')).toBe('after restart');
});
