import { RateLimiter } from '../../src/ingest/rate-limiter';

const limit = { recordsPerSecond: 10, burst: 20 };

test('one process allows the burst at once, then the rate', () => {
  let now = 0;
  const limiter = new RateLimiter(() => now);
  expect(limiter.take('t', limit, 20)).toBe(0);
  expect(limiter.take('t', limit, 1)).toBe(1);
  now = 1000;
  expect(limiter.take('t', limit, 10)).toBe(0);
  expect(limiter.take('t', limit, 1)).toBeGreaterThan(0);
});

test('N API processes of one host each allow 1/N of the burst and of the rate', () => {
  let now = 0;
  const limiters = [new RateLimiter(() => now, 2), new RateLimiter(() => now, 2)];
  for (const limiter of limiters) {
    expect(limiter.take('t', limit, 10)).toBe(0);
    expect(limiter.take('t', limit, 1)).toBe(1);
  }
  now = 1000;
  for (const limiter of limiters) {
    expect(limiter.take('t', limit, 5)).toBe(0);
    expect(limiter.take('t', limit, 1)).toBeGreaterThan(0);
  }
});

test('Retry-After is computed on the process share of the rate', () => {
  const limiter = new RateLimiter(() => 0, 4);
  // Burst 20 / 4 = 5 records; the 6th waits for 1 record at 10/4 = 2.5 records/s: 1 s.
  expect(limiter.take('t', limit, 5)).toBe(0);
  expect(limiter.take('t', limit, 1)).toBe(1);
  // A batch of 5 from empty waits 5 / 2.5 = 2 s.
  expect(limiter.take('t', limit, 5)).toBe(2);
});

test('no limit, no counting', () => {
  expect(new RateLimiter(() => 0, 3).take('t', null, 1000)).toBe(0);
});
