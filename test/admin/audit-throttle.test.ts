import { EntryThrottle } from '../../src/admin/audit-middleware';

test('twenty entries a minute per key (an address refused without a credential), the rest counted into the next one written', () => {
  const throttle = new EntryThrottle(20);
  const t0 = 1_000_000;
  const admitted = Array.from({ length: 50 }, (_, i) => throttle.admit('203.0.113.9', t0 + i));
  expect(admitted.filter((a) => a !== undefined)).toHaveLength(20);
  expect(admitted.slice(20).every((a) => a === undefined)).toBe(true);
  // Another address has its own allowance.
  expect(throttle.admit('198.51.100.1', t0 + 60)).toBe(0);
  // The next minute: the first entry says how many were not written.
  expect(throttle.admit('203.0.113.9', t0 + 60_000)).toBe(30);
  expect(throttle.admit('203.0.113.9', t0 + 60_001)).toBe(0);
});
