import { existsSync, readdirSync } from 'node:fs';
import { deliveryKeys, recentRecordsKey } from '../../jobs/delivery/keys';
import { spoolDirectory } from '../../jobs/spill/spool';
import { waitFor } from '../helpers/wait';
import { startFullRedis, type FullRedis } from './full-redis';

/**
 * A long outage on a small Redis (16 MiB, noeviction): one tracker's only destination is disabled
 * while records keep coming. Its backlog outgrows Redis and goes to the disk spool, so a second
 * tracker keeps getting 202 and its records delivered throughout; the operator enables the
 * destination from the CLI; every acknowledged record lands exactly once, user updates in order, and
 * Redis memory comes back to where it started.
 */
jest.setTimeout(240_000);

const MAXMEMORY = 16 * 1024 * 1024;
const REQUESTS = 500;
/** Between the spill threshold (60 % of maxmemory) and the high watermark (90 %), where requests are refused. */
const PACE_BELOW = 0.75;
let f: FullRedis;

beforeAll(async () => {
  f = await startFullRedis(MAXMEMORY, {}, { spill: true });
}, 30_000);
afterAll(async () => {
  await f?.close();
});

test('a disabled destination spills under memory pressure; the other tracker never notices; all lands once', async () => {
  const second = await f.api.addTracker({ id: 'second', destinations: [{ id: 'live', type: 'local', enabled: true, settings: {} }] });
  const baseline = await f.usedMemory();
  const post = (token: string, path: string, body: unknown) => f.api.http.post(path).set('Authorization', `Tracker ${token}`).send(body as object);

  let highest = baseline;
  for (let n = 0; n < REQUESTS; n++) {
    // As fast as the spiller makes room (it looks once a second): a flood into a 16 MiB Redis
    // outruns that on a fast machine and is refused at the high watermark, by design.
    if ((await f.usedMemory()) > MAXMEMORY * PACE_BELOW) await waitFor(async () => (await f.usedMemory()) <= MAXMEMORY * PACE_BELOW, { timeoutMs: 10_000, intervalMs: 50, message: 'the spiller to make room' });
    expect((await f.send(n)).status).toBe(202);
    if (n % 100 === 0) expect((await post(f.api.token, '/v3/user', { _uid: 'owner', step: n / 100 })).status).toBe(202);
    if (n % 10 === 0) expect((await post(second.token, '/v3/event', { _event: 'other', n })).status).toBe(202);
    if (n % 50 === 0) highest = Math.max(highest, await f.usedMemory());
  }
  const keys = deliveryKeys(f.api.prefix, { trackerId: f.api.tracker.id, destinationId: 'wh' });
  const status = await waitFor(async () => {
    const s = JSON.parse(await f.succeeds('destinations', 'list', f.api.tracker.id, '--json'))[0].status as { queued: number; spooled: number; inRedis: number };
    return s.queued === REQUESTS * 100 + REQUESTS / 100 ? s : undefined;
  }, { timeoutMs: 30_000, message: 'everything queued for the disabled destination' });
  // Most of the backlog is on disk; Redis never got near its limit.
  expect(status.spooled).toBeGreaterThan(status.inRedis);
  expect(highest).toBeLessThan(MAXMEMORY * 0.9);

  // The second tracker's records were delivered throughout.
  await waitFor(async () => Number((await f.warehouseRows('second', 'select count(*) as n from events'))?.[0]![0] ?? 0) === REQUESTS / 10, { timeoutMs: 30_000, message: "the second tracker's events" });

  expect(await f.succeeds('destinations', 'enable', f.api.tracker.id, 'wh')).toContain('enabled');
  // Until the first batch after the enable is written, the warehouse does not exist: nothing delivered yet.
  const count = async () => ((await f.warehouseRows(f.api.tracker.id, 'select count(*) as n, count(distinct _id) as ids from events'))?.[0] ?? [0, 0]).map(Number);
  const delivered = await waitFor(async () => {
    const c = await count();
    return c[0]! >= REQUESTS * 100 ? c : undefined;
  }, { timeoutMs: 120_000, intervalMs: 1000, message: 'the backlog delivered' });
  expect(delivered).toEqual([REQUESTS * 100, REQUESTS * 100]);
  const spool = spoolDirectory(f.dataDir, f.api.tracker.id, 'wh');
  await waitFor(async () => (await f.redis.get(keys.queued)) === '0' && (!existsSync(spool) || readdirSync(spool).length === 0), { timeoutMs: 30_000, message: 'Redis and the spool empty' });
  const owner = JSON.parse(await f.succeeds('query', f.api.tracker.id, "select step from users where _uid = 'owner'", '--json')) as { rows: unknown[][] };
  expect(Number(owner.rows[0]![0])).toBe(REQUESTS / 100 - 1);

  // Redis is back near where it started (allocator slack aside), but for the tracker's last routing
  // steps, kept for `destinations preview` (a megabyte or two of these incompressible records).
  const preview = Number(await f.redis.memory('USAGE', recentRecordsKey(f.api.prefix, f.api.tracker.id)));
  await waitFor(async () => (await f.usedMemory()) < baseline + preview + 2 * 1024 * 1024, { timeoutMs: 30_000, message: 'Redis memory back to its baseline' });
});
