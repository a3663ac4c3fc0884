import { Redis } from 'ioredis';
import { COMPACT_BLOCK_RECORDS, StreamCompactor } from '../../jobs/spill/compactor';
import { DestinationStatusStore } from '../../jobs/delivery/destination-status';
import { deliveryKeys, streamIdTime } from '../../jobs/delivery/keys';
import { LeaderLock } from '../../jobs/delivery/leader-lock';
import { StreamReadTurns } from '../../jobs/delivery/read-turns';
import { COMPACTED_LEVEL, entryFields, entryRecordCount, entryRecords } from '../../jobs/routing/stream-entries';
import { createLogger } from '../../src/core/logger';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis';

/**
 * The compactor against a real Redis: a disabled destination's stream of small blocks becomes a few
 * large ones with the same records in the same order; entries added meanwhile move behind them;
 * a pass that meets a lost lease, a moved cursor or spilled point, or a missing entry changes nothing.
 */
const prefix = uniquePrefix('compact');
const redis = new Redis(TEST_REDIS_URL);
const logger = createLogger('silent');
let keys: ReturnType<typeof deliveryKeys>;
let lock: LeaderLock;
let serial = 0;

const record = (n: number) => JSON.stringify({ kind: 'event', id: `r${n}`, event: 'compact', properties: { n } });

/** Appends entries as the router does: a block per call, and the record count. */
async function route(blockSizes: readonly number[]): Promise<string[]> {
  const sent: string[] = [];
  for (const size of blockSizes) {
    const records = Array.from({ length: size }, () => record(serial++));
    await redis.xadd(keys.stream, '*', ...(entryFields(records) as string[]));
    await redis.incrby(keys.queued, size);
    sent.push(...records);
  }
  return sent;
}

/** Every record of the stream in order, with its entry's record count. */
async function readStream(): Promise<{ records: string[]; sizes: number[] }> {
  const raw = await redis.xrangeBuffer(keys.stream, '-', '+');
  const records = raw.flatMap(([id, fields]) => entryRecords(id.toString(), fields).map((r) => r.json));
  return { records, sizes: raw.map(([, fields]) => entryRecordCount(fields)) };
}

beforeEach(async () => {
  keys = deliveryKeys(prefix, { trackerId: `t${serial}`, destinationId: 'paused' });
  lock = new LeaderLock(redis, keys.lock, 10_000);
  expect(await lock.acquire()).toBe(true);
});
afterEach(async () => {
  await lock.release();
});
afterAll(async () => {
  await deletePrefix(prefix);
  redis.disconnect();
});

test('a run of small blocks becomes blocks of COMPACT_BLOCK_RECORDS, same records, same order, same count', async () => {
  const sent = await route(Array.from({ length: 70 }, (_, i) => 1 + (i % 5)));
  const compactor = new StreamCompactor(redis, keys, lock, logger);
  expect(await compactor.compact()).toBe(70 - Math.ceil(sent.length / COMPACT_BLOCK_RECORDS));
  const after = await readStream();
  expect(after.records).toEqual(sent);
  expect(after.sizes).toEqual([100, 100, sent.length - 200]);
  // Written to stay, so at the dense level rather than the router's fast one.
  const [first] = await redis.xrangeBuffer(keys.stream, '-', '+', 'COUNT', 1);
  expect(first![1][3]).toEqual(entryFields(sent.slice(0, 100), undefined, COMPACTED_LEVEL)[3]);
  expect(Number(await redis.get(keys.queued))).toBe(sent.length);
  // Nothing left to do: a second pass changes nothing.
  expect(await compactor.compact()).toBe(0);
});

test('the partial last block is filled by later passes; full blocks stay as they are', async () => {
  const compactor = new StreamCompactor(redis, keys, lock, logger);
  const sent = await route(Array.from({ length: 30 }, () => 5));
  expect(await compactor.compact()).toBe(30 - 2);
  const [full] = await redis.xrange(keys.stream, '-', '+', 'COUNT', 1);
  sent.push(...(await route(Array.from({ length: 12 }, () => 5))));
  // The 50-record block and 60 new records: 13 entries become 2.
  expect(await compactor.compact()).toBe(13 - 2);
  const after = await readStream();
  expect(after.records).toEqual(sent);
  expect(after.sizes).toEqual([100, 100, 10]);
  // The first full block was not rewritten.
  expect((await redis.xrange(keys.stream, '-', '+', 'COUNT', 1))[0]![0]).toBe(full![0]);
});

test('a few small entries wait for more; entries at or before the cursor and the spilled point are never touched', async () => {
  const compactor = new StreamCompactor(redis, keys, lock, logger);
  await route([1, 1, 1]);
  expect(await compactor.plan()).toBeUndefined();
  const [, second, third] = await redis.xrange(keys.stream, '-', '+');
  // Half delivered: the cursor sits inside the second entry, so only the third and later are candidates.
  await redis.set(keys.cursor, `${second![0]}#0`);
  await route(Array.from({ length: 10 }, () => 2));
  const plan = await compactor.plan();
  expect(plan!.oldIds).toHaveLength(11);
  expect(plan!.oldIds[0]).toBe(third![0]);
  await redis.set(keys.spilled, `${plan!.oldIds[2]!}#1`);
  expect((await compactor.plan())!.oldIds).toEqual(plan!.oldIds.slice(3));
  expect(await compactor.compact()).toBe(7);
  expect((await redis.xrange(keys.stream, '-', '+')).map(([id]) => id).slice(0, 5)).toEqual([(await redis.xrange(keys.stream, '-', '+', 'COUNT', 1))[0]![0], second![0], ...plan!.oldIds.slice(0, 3)]);
});

test('entries the router adds after the read are moved behind the new blocks, keeping when they were queued', async () => {
  const compactor = new StreamCompactor(redis, keys, lock, logger);
  const sent = await route(Array.from({ length: 20 }, () => 1));
  const plan = (await compactor.plan())!;
  sent.push(...(await route([3, 1])));
  const [added] = await redis.xrange(keys.stream, `(${plan.oldIds[plan.oldIds.length - 1]!}`, '+', 'COUNT', 1);
  expect(await compactor.commit(plan)).toBe(true);
  const after = await readStream();
  expect(after.records).toEqual(sent);
  expect(after.sizes).toEqual([20, 3, 1]);
  const moved = (await redis.xrange(keys.stream, '-', '+'))[1]!;
  expect(moved[0]).not.toBe(added![0]);
  expect(moved[1].slice(-2)).toEqual(['t', String(streamIdTime(added![0]))]);
  expect(Number(await redis.get(keys.queued))).toBe(24);
});

test('nothing changes when the cursor or spilled point moved, an entry read is gone, or the lease was lost since the read', async () => {
  const compactor = new StreamCompactor(redis, keys, lock, logger);
  const sent = await route(Array.from({ length: 20 }, () => 1));
  const before = await redis.xrange(keys.stream, '-', '+');
  const plan = (await compactor.plan())!;

  for (const key of [keys.cursor, keys.spilled]) {
    await redis.set(key, '1-0');
    expect(await compactor.commit(plan)).toBe(false);
    await redis.del(key);
  }
  const gone = (await compactor.plan())!;
  await redis.xdel(keys.stream, gone.oldIds[3]!);
  expect(await compactor.commit(gone)).toBe(false);
  await redis.set(keys.lock, 'another-worker');
  expect(await compactor.commit((await compactor.plan())!)).toBe(false);
  await redis.set(keys.lock, lock.token);

  expect(await redis.xrange(keys.stream, '-', '+')).toEqual(before.filter(([id]) => id !== gone.oldIds[3]));
  expect((await readStream()).records).toEqual(sent.filter((_, i) => i !== 3));
});

test('a compacted block keeps when its oldest record was queued: the status lag does not restart', async () => {
  await route(Array.from({ length: 10 }, () => 1));
  const [first] = await redis.xrange(keys.stream, '-', '+', 'COUNT', 1);
  await new Promise((r) => setTimeout(r, 30));
  expect(await new StreamCompactor(redis, keys, lock, logger).compact()).toBe(9);
  const [block] = await redis.xrange(keys.stream, '-', '+');
  expect(streamIdTime(block![0])).toBeGreaterThan(streamIdTime(first![0]));
  const now = Date.now();
  const status = await new DestinationStatusStore(redis, keys).read(now);
  expect(status.lagMs).toBe(now - streamIdTime(first![0]));
  expect(status.queued).toBe(10);
});

test('a stream from before record counts (one record an entry, no count) gets its count before it is compacted', async () => {
  for (let i = 0; i < 10; i++) await redis.xadd(keys.stream, '*', 'r', record(serial++));
  expect(await new StreamCompactor(redis, keys, lock, logger).compact()).toBe(9);
  expect(Number(await redis.get(keys.queued))).toBe(10);
});

test('beside a delivery loop, passes run only while it is stalled, never over what it has read, and never during a read', async () => {
  const turns = new StreamReadTurns();
  const compactor = new StreamCompactor(redis, keys, lock, logger, turns);
  await route(Array.from({ length: 12 }, () => 1));
  const [, , third] = await redis.xrange(keys.stream, '-', '+');
  await turns.read(async () => ({ lastEntry: third![0] }));
  expect(await compactor.compact()).toBe(0);
  turns.setStalled(true);
  // A read in progress holds the pass back until it is done, and what it read is left alone.
  let release!: () => void;
  const reading = turns.read(() => new Promise<{ lastEntry: string }>((r) => (release = () => r({ lastEntry: third![0] }))));
  const pass = compactor.compact();
  expect(await redis.xlen(keys.stream)).toBe(12);
  release();
  await reading;
  expect(await pass).toBe(8);
  const ids = (await redis.xrange(keys.stream, '-', '+')).map(([id]) => id);
  expect(ids.slice(0, 3)).toEqual((await redis.xrange(keys.stream, '-', third![0])).map(([id]) => id));
  expect(ids).toHaveLength(4);
  turns.setStalled(false);
  await route(Array.from({ length: 10 }, () => 1));
  expect(await compactor.compact()).toBe(0);
});

test('a backlog already in full blocks costs one small read a pass, not the whole scan', async () => {
  const compactor = new StreamCompactor(redis, keys, lock, logger);
  const sent = await route([...Array.from({ length: 30 }, () => COMPACT_BLOCK_RECORDS), ...Array.from({ length: 10 }, () => 1)]);
  const spy = jest.spyOn(redis, 'xrevrangeBuffer');
  const plan = (await compactor.plan())!;
  expect(plan.oldIds).toHaveLength(10);
  // One read of a handful of entries, not of the 40 there are.
  expect(spy.mock.calls.map((call) => Number((call as unknown[])[4]))).toEqual([16]);
  spy.mockRestore();
  expect(await compactor.commit(plan)).toBe(true);
  expect((await readStream()).records).toEqual(sent);
});
