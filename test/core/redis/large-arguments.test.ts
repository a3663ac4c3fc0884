import { Queue } from 'bullmq';
import { Command, type Redis } from 'ioredis';
import { createRedis } from '../../../src/core/redis/redis';
import { largeStringsAsBuffers } from '../../../src/core/redis/large-arguments';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../../helpers/redis';

/** A long text with characters of one, two, three and four UTF-8 bytes, so that a byte count taken as a character count would show. */
const longText = (n: number): string => Array.from({ length: n }, (_, i) => `{"i":${i},"t":"café — 東京 🚀"}`).join(',');

describe('largeStringsAsBuffers', () => {
  test('long strings become their UTF-8 bytes when the command holds a buffer', () => {
    const text = longText(200);
    const args: unknown[] = ['key', Buffer.from([1, 2]), text, 'short'];
    largeStringsAsBuffers(args);
    expect(Buffer.isBuffer(args[2])).toBe(true);
    expect((args[2] as Buffer).toString('utf8')).toBe(text);
    expect(args[0]).toBe('key');
    expect(args[3]).toBe('short');
  });

  test('a command without a buffer is left as it is (ioredis would write a buffer there as text)', () => {
    const args: unknown[] = ['key', longText(200)];
    largeStringsAsBuffers(args);
    expect(typeof args[1]).toBe('string');
  });
});

describe('a client made by createRedis, against Redis', () => {
  const prefix = uniquePrefix('large-args');
  let redis: Redis;
  beforeAll(() => {
    redis = createRedis(TEST_REDIS_URL, 'worker');
  });
  afterAll(async () => {
    await deletePrefix(prefix);
    redis.disconnect();
  });

  // The script stores its text argument and answers the byte length Redis received.
  const STORE = "redis.call('SET', KEYS[1], ARGV[2]) return string.len(ARGV[2])";

  test('a script call with a buffer and a long multibyte string stores the string byte for byte', async () => {
    const text = longText(20_000);
    const length = await redis.eval(STORE, 1, `${prefix}:eval`, Buffer.from([0xff, 0x00]), text);
    expect(length).toBe(Buffer.byteLength(text));
    expect(await redis.get(`${prefix}:eval`)).toBe(text);
  });

  test("the client's commands carry the long string as bytes", async () => {
    const text = longText(1_000);
    const command = new Command('eval', [STORE, 1, `${prefix}:command`, Buffer.from('x'), text]);
    redis.sendCommand(command);
    expect(Buffer.isBuffer(command.args[4])).toBe(true);
    expect(await command.promise).toBe(Buffer.byteLength(text));
  });

  test('the same inside MULTI and a pipeline', async () => {
    const text = longText(5_000);
    await redis.multi().eval(STORE, 1, `${prefix}:multi`, Buffer.from('x'), text).exec();
    await redis.pipeline().eval(STORE, 1, `${prefix}:pipeline`, Buffer.from('x'), text).exec();
    expect(await redis.get(`${prefix}:multi`)).toBe(text);
    expect(await redis.get(`${prefix}:pipeline`)).toBe(text);
  });

  test('BullMQ jobs of a large payload, one by one and in bulk, read back as they were written', async () => {
    const queue = new Queue('large', { connection: redis, prefix });
    try {
      const data = { records: Array.from({ length: 1_000 }, (_, i) => ({ i, title: 'café — 東京 🚀', text: 'x'.repeat(200) })) };
      const one = await queue.add('records', data);
      const bulk = await queue.addBulk([
        { name: 'records', data },
        { name: 'records', data: { records: data.records.slice(0, 10) } },
      ]);
      expect((await queue.getJob(one.id!))?.data).toEqual(data);
      expect((await queue.getJob(bulk[0]!.id!))?.data).toEqual(data);
      expect((await queue.getJob(bulk[1]!.id!))?.data).toEqual({ records: data.records.slice(0, 10) });
    } finally {
      await queue.close();
    }
  });
});
