import { Writable } from 'node:stream';
import type { Redis } from 'ioredis';
import { createLogger } from '../../src/core/logger';
import { DEFAULT_MEMORY_BUDGET, fullestMaster, MemoryBudget } from '../../src/core/redis/memory-budget';

const MiB = 1024 * 1024;

/** Redis's INFO memory as it prints it, with the figures a test sets. */
class InfoMemory {
  used = 0;
  maxmemory = 100 * MiB;
  policy = 'noeviction';
  notCounted = 0;
  down = false;
  calls = 0;
  async info(): Promise<string> {
    this.calls++;
    if (this.down) throw new Error('Connection is closed.');
    return ['# Memory', `used_memory:${this.used}`, `maxmemory:${this.maxmemory}`, `maxmemory_policy:${this.policy}`, `mem_not_counted_for_evict:${this.notCounted}`, ''].join('\r\n');
  }
}

function setup(overrides: Partial<typeof DEFAULT_MEMORY_BUDGET> = {}) {
  const redis = new InfoMemory();
  const lines: Array<{ level: number; msg: string }> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as { level: number; msg: string });
      done();
    },
  });
  const budget = new MemoryBudget(redis as unknown as Redis, createLogger('info', sink), { ...DEFAULT_MEMORY_BUDGET, ...overrides });
  const at = async (percent: number) => {
    redis.used = Math.round((redis.maxmemory * percent) / 100);
    return (await budget.sample()).state;
  };
  const warnings = () => lines.filter((l) => l.level === 40).map((l) => l.msg);
  return { redis, budget, at, lines, warnings };
}

test('states with hysteresis; a warning once per upward crossing of 80 % and 90 %', async () => {
  const { budget, at, warnings, lines } = setup();
  expect(budget.snapshot().state).toBe('unknown');
  expect(await at(50)).toBe('ok');
  expect(await at(81)).toBe('warning');
  expect(await at(79)).toBe('warning'); // within the hysteresis (high − resume = 5 points)
  expect(await at(82)).toBe('warning');
  expect(warnings()).toEqual(['Redis memory above the warn watermark']);
  expect(await at(90)).toBe('full');
  expect(budget.admits()).toBe(false);
  expect(await at(86)).toBe('full'); // not below the resume watermark yet
  expect(await at(89)).toBe('full');
  expect(warnings()).toHaveLength(2);
  expect(warnings()[1]).toMatch(/high watermark: ingest refused/);
  expect(await at(84)).toBe('warning');
  expect(budget.admits()).toBe(true);
  expect(lines.at(-1)!.msg).toMatch(/below the resume watermark: ingest accepted again/);
  expect(await at(70)).toBe('ok');
  expect(await at(80)).toBe('warning');
  expect(warnings()).toHaveLength(3);
});

test('the snapshot: used less what Redis does not count, the limit and where it comes from, the watermarks', async () => {
  const { redis, budget } = setup();
  redis.used = 30 * MiB;
  redis.notCounted = 2 * MiB;
  expect(await budget.sample()).toMatchObject({
    state: 'ok',
    usedBytes: 28 * MiB,
    limitBytes: 100 * MiB,
    limitSource: 'redis',
    policy: 'noeviction',
    watermarks: { warnBytes: 80 * MiB, highBytes: 90 * MiB, resumeBytes: 85 * MiB },
  });
  const set = setup({ limitBytes: 40 * MiB });
  set.redis.used = 37 * MiB;
  expect(await set.budget.sample()).toMatchObject({ state: 'full', limitBytes: 40 * MiB, limitSource: 'setting' });
});

test('no limit known: unlimited, nothing refused; a policy that evicts is warned about once', async () => {
  const { redis, budget, warnings } = setup();
  redis.maxmemory = 0;
  redis.used = 500 * MiB;
  expect(await budget.sample()).toMatchObject({ state: 'unlimited', limitBytes: null, watermarks: null });
  budget.wrote(1_000_000);
  expect(budget.admits()).toBe(true);
  redis.maxmemory = 1000 * MiB;
  redis.policy = 'allkeys-lru';
  await budget.sample();
  await budget.sample();
  expect(warnings().filter((w) => w.includes('not noeviction'))).toHaveLength(1);
});

test('records written since the last sample count against the watermark until it measures them', async () => {
  const { budget, at } = setup();
  expect(await at(89.5)).toBe('warning');
  expect(budget.admits()).toBe(true);
  // 90 % of 100 MiB is 512 KiB away: 600 records at 1 KiB each reach it.
  budget.wrote(600);
  expect(budget.admits()).toBe(false);
  expect(await at(89.5)).toBe('warning');
  expect(budget.admits()).toBe(true);
});

test('a write refused on the estimate alone is measured first: admitted when Redis has room, refused when it has not', async () => {
  const { redis, budget, at } = setup();
  expect(await at(70)).toBe('ok');
  // 20 % of 100 MiB away, counted at 1 KiB a record: 25 000 records written since the sample reach it.
  budget.wrote(25_000);
  expect(budget.admits()).toBe(false);
  const before = redis.calls;
  // Concurrent writes share one INFO; Redis, compressed, took far less than the estimate.
  expect(await Promise.all([budget.admitsMeasured(), budget.admitsMeasured(), budget.admitsMeasured()])).toEqual([true, true, true]);
  expect(redis.calls - before).toBe(1);
  redis.used = 91 * MiB;
  budget.wrote(25_000);
  expect(await budget.admitsMeasured()).toBe(false);
  expect(budget.snapshot().state).toBe('full');
  // Full: refused at once, without asking Redis.
  const calls = redis.calls;
  expect(await budget.admitsMeasured()).toBe(false);
  expect(redis.calls).toBe(calls);
});

test('refused requests do not each cost an INFO: a sample on demand at most every 100 ms', async () => {
  const { redis, budget, at } = setup();
  await at(89.9);
  budget.wrote(1000);
  const before = redis.calls;
  for (let i = 0; i < 1000; i++) expect(budget.admits()).toBe(false);
  await budget.sample();
  expect(redis.calls - before).toBeLessThanOrEqual(2);
});

test('Redis not answering: unknown, and ingest is not refused for memory (the write itself fails fast)', async () => {
  const { redis, budget, at } = setup();
  expect(await at(95)).toBe('full');
  redis.down = true;
  expect((await budget.sample()).state).toBe('unknown');
  expect(budget.admits()).toBe(true);
});

describe('fullestMaster: on a Redis Cluster the budget judges the master nearest its limit', () => {
  const master = (node: string, usedBytes: number, maxmemoryBytes: number, policy = 'noeviction') => ({ node, usedBytes, maxmemoryBytes, policy });

  test('by share of its own limit, not by bytes', () => {
    const masters = [master('a', 80 * MiB, 200 * MiB), master('b', 60 * MiB, 64 * MiB), master('c', 90 * MiB, 0)];
    expect(fullestMaster(masters, undefined)?.node).toBe('b');
  });

  test('REDIS_MAXMEMORY_BYTES is each master’s limit', () => {
    const masters = [master('a', 80 * MiB, 200 * MiB), master('b', 60 * MiB, 64 * MiB)];
    expect(fullestMaster(masters, 100 * MiB)?.node).toBe('a');
  });

  test('no limit anywhere: the one that uses most; none answered: none', () => {
    expect(fullestMaster([master('a', 1 * MiB, 0), master('b', 2 * MiB, 0)], undefined)?.node).toBe('b');
    expect(fullestMaster([], undefined)).toBeUndefined();
  });

  test('an evicting policy on any master is reported', () => {
    const masters = [master('a', 10 * MiB, 100 * MiB, 'allkeys-lru'), master('b', 90 * MiB, 100 * MiB)];
    expect(fullestMaster(masters, undefined)).toEqual({ ...masters[1], policy: 'allkeys-lru' });
  });
});
