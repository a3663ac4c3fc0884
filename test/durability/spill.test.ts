import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { expectUpdatesInOrder, waitForWarehouseRow } from '../helpers/warehouse';
import { DestinationStatusStore } from '../../jobs/delivery/destination-status';
import { deliveryKeys } from '../../jobs/delivery/keys';
import { spoolDirectory } from '../../jobs/spill/spool';
import { TrackerStore } from '../../src/core/trackers/store';
import { generateToken } from '../../src/core/trackers/tokens';
import { TrackerSchema } from '../../src/core/trackers/types';
import { freePort } from '../helpers/redis-server';
import { tributaryProcesses, waitReady, type TributaryProcess } from '../helpers/tributary-process';
import { waitFor } from '../helpers/wait';

/**
 * A disabled local destination whose backlog spills to disk in small frames, the worker killed
 * with SIGKILL again and again while it spills, then again while it delivers from the spool once
 * enabled: every event lands exactly once and every user's updates apply in accepted order.
 */
jest.setTimeout(150_000);

const EVENTS = 4000;
const USERS = 4;
const STEPS = 8;
const CAP = 300;

const { prefix, dataDir, redis, spawn } = tributaryProcesses('spill-kill', {
  DELIVERY_LEASE_MS: '1000',
  DELIVERY_DISCOVER_INTERVAL_MS: '100',
  ROUTER_LOCK_MS: '1000',
  DESTINATION_REDIS_CAP_RECORDS: String(CAP),
  DESTINATION_SPILL_FRAME_RECORDS: '40',
});
const token = generateToken();
const keys = deliveryKeys(prefix, { trackerId: 'shop', destinationId: 'wh' });
const status = new DestinationStatusStore(redis, keys);
const store = new TrackerStore(redis, prefix);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function startWorker(): TributaryProcess {
  return spawn('worker');
}

test('kill -9 while spilling and while delivering from the spool: nothing lost, nothing doubled, in order', async () => {
  // Batches of 200: delivering the spool then takes many writes, each a moment to kill the worker in.
  await store.save(TrackerSchema.parse({ id: 'shop', name: 'Shop', tokens: [{ token }], destinations: [{ id: 'wh', type: 'local', enabled: false, settings: { releaseAfterIdleMs: 60_000, batchRecords: 200 } }] }));
  const port = await freePort();
  const api = spawn('api', { PORT: String(port) });
  await waitReady(port, api);
  const post = (p: string, body: unknown) => fetch(`http://127.0.0.1:${port}${p}`, { method: 'POST', headers: { Authorization: `Tracker ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

  let worker = startWorker();
  let killsWhileSpilling = 0;
  const sending = (async () => {
    for (let step = 0; step < STEPS; step++) {
      for (let u = 0; u < USERS; u++) expect((await post('/v3/user', { _uid: `u${u}`, step, [`seen_${step}`]: true })).status).toBe(202);
      for (let b = 0; b < EVENTS / STEPS / 100; b++) {
        const n0 = (step * (EVENTS / STEPS)) + b * 100;
        expect((await post('/v3/event', Array.from({ length: 100 }, (_, i) => ({ _event: 'load', n: n0 + i })))).status).toBe(202);
      }
      await sleep(150);
    }
  })();
  // The worker spills about once a second as records arrive: kill it at odd moments meanwhile.
  while (!(await Promise.race([sending.then(() => true), sleep(0).then(() => false)]))) {
    await sleep(250 + Math.floor(Math.random() * 500));
    worker.child.kill('SIGKILL');
    await worker.exited;
    killsWhileSpilling++;
    worker = startWorker();
  }
  await sending;
  expect(killsWhileSpilling).toBeGreaterThan(0);

  const spilled = await waitFor(async () => {
    const s = await status.read();
    // Every accepted record routed (a restarted worker may still be routing the last job), part on disk.
    return s.spooled > 0 && s.inRedis <= CAP && s.queued === EVENTS + USERS * STEPS ? s : undefined;
  }, { timeoutMs: 30_000, message: 'every record routed, the backlog spilled below the cap' });
  expect(spilled.queued).toBe(EVENTS + USERS * STEPS);

  // Enabled: delivery starts with the spool. Kill the worker twice while it reads from it.
  await store.update('shop', (t) => ({ ...t, destinations: t.destinations.map((d) => ({ ...d, enabled: true })) }));
  for (let kill = 0; kill < 2; kill++) {
    await waitFor(async () => {
      const s = await status.read();
      return s.spooled > 0 && s.delivered > kill * 200;
    }, { timeoutMs: 30_000, intervalMs: 5, message: 'delivering from the spool' });
    worker.child.kill('SIGKILL');
    await worker.exited;
    worker = startWorker();
  }

  const file = path.join(dataDir, 'warehouse', 'shop.duckdb');
  const counts = await waitForWarehouseRow(file, "select count(*)::int, count(distinct _id)::int, count(distinct n)::int from events where _event = 'load'", (row) => row[0] === EVENTS, `${EVENTS} events in the warehouse`);
  expect(counts).toEqual([EVENTS, EVENTS, EVENTS]);
  await expectUpdatesInOrder(file, USERS, STEPS);

  await waitFor(async () => (await status.read()).queued === 0, { timeoutMs: 30_000, message: 'nothing left queued' });
  expect(await redis.xlen(keys.stream)).toBe(0);
  const dir = spoolDirectory(dataDir, 'shop', 'wh');
  await waitFor(() => !existsSync(dir) || readdirSync(dir).length === 0, { message: 'delivered spool segments deleted' });
});
