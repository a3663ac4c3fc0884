import { guardLateChange, coalesceUpserts } from '../../../connectors/shared/coalesce-upserts';
import { usePostgres, user } from './pg-fixture';

const pg = usePostgres('order');

const at = (iso: string) => (r: ReturnType<typeof user>) => ({ ...r, receivedAt: iso });

test('an update older than the stored row fills its gaps and overwrites nothing; a newer one applies', async () => {
  const f = await pg.fixture();
  const newer = at('2026-11-29T10:00:00.000Z')(user('u1', { plan: 'pro', seats: 5, coupon: 'X' }));
  await f.write([newer]);
  // Received an hour earlier, delivered now (a dead letter replayed): its plan, its clear of the
  // coupon and its seats are older than what the row holds.
  const older = at('2026-11-29T09:00:00.000Z')(user('u1', { plan: 'free', seats: 1, coupon: null, email: 'ada@example.com' }));
  expect((await f.write([older])).map((o) => o.status)).toEqual(['ok']);
  const [row] = await f.rows('users');
  expect(row).toMatchObject({ _uid: 'u1', _id: newer.id, plan: 'pro', seats: 5, coupon: 'X', email: 'ada@example.com' });
  expect(new Date(String(row!._received_at)).toISOString()).toBe('2026-11-29T10:00:00.000Z');

  const later = at('2026-11-29T11:00:00.000Z')(user('u1', { plan: 'team', coupon: null }));
  await f.write([later]);
  const [after] = await f.rows('users');
  expect(after).toMatchObject({ _id: later.id, plan: 'team', seats: 5, email: 'ada@example.com' });
  expect(after!.coupon).toBeNull();
});

test('guardLateChange: as new or newer is left as it is', () => {
  const change = coalesceUpserts('user', [at('2026-11-29T10:00:00.000Z')(user('u1', { a: 1 }))]).changes[0]!;
  expect(guardLateChange(change, undefined, undefined)).toBe(change);
  expect(guardLateChange(change, Object.assign(Object.create(null), { a: 2 }), { id: 'x', receivedAt: '2026-11-29T10:00:00.000Z' })).toBe(change);
  const late = guardLateChange(change, Object.assign(Object.create(null), { a: 2 }), { id: 'x', receivedAt: '2026-11-29T10:00:00.001Z' });
  expect({ ...late.properties }).toEqual({});
  expect(late.latest).toMatchObject({ id: 'x', receivedAt: '2026-11-29T10:00:00.001Z' });
});
