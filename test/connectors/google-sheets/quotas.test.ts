import { RetryableError } from '../../../connectors/errors';
import type { TrackedRecord } from '../../../src/core/records/types';
import { event, OK, rowsOf, startHarness, user, type Harness } from './harness';

let h: Harness;
afterEach(() => h.close());

const TAB = 'events_2026_11';
const refusals = () => h.fake.requests.filter((r) => r.status === 429).length;

test('429 RESOURCE_EXHAUSTED: RetryableError into the next minute; the next write waits for it and lands once', async () => {
  // Another client spends the same credential's quota: Google lets only 5 more writes through,
  // 3 for the first flush (new tab, header, append), then one per flush.
  h = await startHarness({ quotas: { writePerMinutePerUser: 5 } });
  h.clock.set(Date.UTC(2026, 10, 22, 12, 0, 10));
  const w = await h.open();
  for (let i = 0; i < 3; i++) await h.write(w, [event(h.clock, { n: i })]);
  const batch = [event(h.clock, { n: 3 })];
  const err = (await h.write(w, batch).catch((e: unknown) => e)) as RetryableError;
  expect(err).toBeInstanceOf(RetryableError);
  expect(err.details).toMatchObject({ status: 429, reason: 'RESOURCE_EXHAUSTED' });
  expect(err.retryAfterMs).toBe(51_000); // 50 s to the next minute, plus a second
  const failedAt = h.clock.now();
  expect(await h.write(w, batch)).toEqual([OK]);
  expect(h.clock.now() - failedAt).toBeGreaterThanOrEqual(51_000);
  expect(rowsOf(h.tab(TAB)).map((r) => r.n)).toEqual([0, 1, 2, 3]);
});

test('the client-side budget waits rather than exceed writeRequestsPerMinute', async () => {
  h = await startHarness({ quotas: { writePerMinutePerUser: 5 } });
  const w = await h.open({ writeRequestsPerMinute: 5 });
  const start = h.clock.now();
  for (let i = 0; i < 12; i++) await h.write(w, [event(h.clock, { n: i })]);
  expect(refusals()).toBe(0);
  expect(h.fake.quota.peak('anonymous', 'write')).toBeLessThanOrEqual(5);
  expect(h.clock.now() - start).toBeGreaterThanOrEqual(120_000);
  expect(rowsOf(h.tab(TAB))).toHaveLength(12);
});

test('5 000 events a minute for 5 minutes, with faults: no row lost or doubled, quota never exceeded', async () => {
  h = await startHarness();
  h.clock.set(Date.UTC(2026, 10, 22, 12, 0, 0));
  const w = await h.open();
  const sent: string[] = [];
  const start = h.clock.now();
  const end = start + 5 * 60_000;
  // Events arrive steadily, one every 12 ms (5 000 a minute); every maxAgeMs (2 s) the delivery
  // loop hands over what arrived since, and a few user updates. Retries make later batches bigger.
  for (let tick = 0; h.clock.now() < end; tick++) {
    const due = Math.floor((h.clock.now() + 2000 - start) / 12) - sent.length;
    const batch: TrackedRecord[] = Array.from({ length: due }, (_, i) => event(h.clock, { tick, i, page: `/p/${i % 7}` }));
    if (tick % 5 === 0) batch.push(user(h.clock, `u${Math.floor(tick / 5) % 20}`, { lastTick: tick }));
    sent.push(...batch.filter((r) => r.kind === 'event').map((r) => r.id));
    if (tick % 17 === 3) h.fake.faults.add({ kind: 'lose-response' }, { method: 'values.batchUpdate' });
    if (tick % 23 === 5) h.fake.faults.add({ kind: 'status', status: 503 });
    const before = h.clock.now();
    for (let attempt = 0; ; attempt++) {
      try {
        expect(await h.write(w, batch)).toHaveLength(batch.length);
        break;
      } catch (err) {
        expect(err).toBeInstanceOf(RetryableError);
        expect(attempt).toBeLessThan(3);
        h.clock.advance(Math.max(500, (err as RetryableError).retryAfterMs ?? 0));
      }
    }
    h.clock.advance(Math.max(0, 2000 - (h.clock.now() - before)));
  }
  const ids = rowsOf(h.tab(TAB)).map((r) => r._id);
  expect(ids).toHaveLength(sent.length);
  expect(new Set(ids).size).toBe(sent.length);
  expect(ids).toEqual(sent);
  expect(rowsOf(h.tab('users'))).toHaveLength(20);
  expect(refusals()).toBe(0);
  expect(h.fake.quota.peak('anonymous', 'write')).toBeLessThanOrEqual(60);
  expect(h.fake.quota.peak('anonymous', 'read')).toBeLessThanOrEqual(60);
  expect(sent.length).toBeGreaterThanOrEqual(5 * 5000);
});
