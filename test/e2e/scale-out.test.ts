import path from 'node:path';
import { deliveryKeys } from '../../jobs/delivery/keys';
import { TrackerStore } from '../../src/core/trackers/store';
import { generateToken } from '../../src/core/trackers/tokens';
import { TrackerSchema } from '../../src/core/trackers/types';
import { freePort } from '../helpers/redis-server';
import { tributaryProcesses, waitReady } from '../helpers/tributary-process';
import { waitFor } from '../helpers/wait';
import { expectUpdatesInOrder, waitForWarehouseRow } from '../helpers/warehouse';

/**
 * Two API processes and two worker processes on one Redis. The worker that delivers the
 * destination is killed with SIGKILL in the middle of a batch; every event must still land
 * exactly once, and every user's updates in the order they were accepted.
 */
jest.setTimeout(120_000);

const EVENTS = 3000;
const USERS = 5;
const STEPS = 12;

const { prefix, dataDir, redis, procs, spawn } = tributaryProcesses('scale', { DELIVERY_LEASE_MS: '1500', DELIVERY_DISCOVER_INTERVAL_MS: '100', ROUTER_LOCK_MS: '1000' });
const token = generateToken();

test('2 API + 2 workers, the delivering worker killed mid-batch: every record exactly once, in order', async () => {
  await new TrackerStore(redis, prefix).save(
    TrackerSchema.parse({ id: 'shop', name: 'Shop', tokens: [{ token }], destinations: [{ id: 'wh', type: 'local', settings: { releaseAfterIdleMs: 60_000 } }] }),
  );
  const ports = [await freePort(), await freePort()];
  for (const port of ports) spawn('api', { PORT: String(port) });
  const workers = [spawn('worker'), spawn('worker')];
  await Promise.all(ports.map((port, i) => waitReady(port, procs[i]!)));

  const post = (i: number, p: string, body: unknown) =>
    fetch(`http://127.0.0.1:${ports[i % 2]}${p}`, { method: 'POST', headers: { Authorization: `Tracker ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

  const keys = deliveryKeys(prefix, { trackerId: 'shop', destinationId: 'wh' });
  let killed = false;
  const killLeaderMidBatch = async () => {
    await waitFor(async () => Number(await redis.hget(keys.status, 'inFlight')) > 0, { intervalMs: 2, message: 'a batch in flight' });
    const holder = await redis.get(keys.lock);
    const pid = Number(holder?.split(':')[1]);
    const leader = workers.find((w) => w.child.pid === pid);
    expect(leader).toBeDefined();
    leader!.child.kill('SIGKILL');
    killed = true;
  };

  const sending = (async () => {
    for (let step = 0; step < STEPS; step++) {
      for (let u = 0; u < USERS; u++) expect((await post(step + u, '/v3/user', { _uid: `u${u}`, step, [`seen_${step}`]: true })).status).toBe(202);
    }
    const batches = Array.from({ length: EVENTS / 50 }, (_, b) => Array.from({ length: 50 }, (_, i) => ({ _event: 'load', n: b * 50 + i })));
    await Promise.all(
      batches.map(async (batch, b) => {
        const res = await post(b, '/v3/event', batch);
        expect(res.status).toBe(202);
      }),
    );
  })();
  await Promise.all([sending, killLeaderMidBatch()]);
  expect(killed).toBe(true);

  const file = path.join(dataDir, 'warehouse', 'shop.duckdb');
  const counts = await waitForWarehouseRow(file, "select count(*)::int, count(distinct _id)::int from events where _event = 'load'", (row) => row[0] === EVENTS, `${EVENTS} events in the warehouse`);
  expect(counts).toEqual([EVENTS, EVENTS]);
  await expectUpdatesInOrder(file, USERS, STEPS);
});
