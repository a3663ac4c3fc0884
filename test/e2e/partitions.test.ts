import path from 'node:path';
import { partitionDeliveryKeys } from '../../jobs/delivery/keys';
import { Keyspace, partitionOf } from '../../src/core/redis/keyspace';
import { TrackerStore } from '../../src/core/trackers/store';
import { generateToken } from '../../src/core/trackers/tokens';
import { TrackerSchema } from '../../src/core/trackers/types';
import { freePort } from '../helpers/redis-server';
import { tributaryProcesses, waitReady } from '../helpers/tributary-process';
import { waitFor } from '../helpers/wait';
import { expectUpdatesInOrder, waitForWarehouseRow } from '../helpers/warehouse';

/**
 * A tracker split into 4 partitions over a keyspace of 4 shards, 2 API and 2 worker processes on
 * one Redis. A worker that is delivering is killed with SIGKILL mid-batch: every event lands exactly
 * once, every user's updates in the order they were accepted, and each partition's records went
 * through its own shard's keys.
 */
jest.setTimeout(150_000);

const PARTITIONS = 4;
const EVENTS = 2000;
const USERS = 8;
const STEPS = 10;

const { prefix, dataDir, redis, procs, spawn } = tributaryProcesses('parts', {
  REDIS_SHARDS: '4',
  DELIVERY_LEASE_MS: '1500',
  DELIVERY_DISCOVER_INTERVAL_MS: '100',
  ROUTER_LOCK_MS: '1000',
});
const keyspace = new Keyspace(prefix, 4);
const token = generateToken();

/** A tracker id whose partitions fall on at least two shards, so that the test sees them spread. */
const trackerId = Array.from({ length: 50 }, (_, n) => `shop-${n}`).find((id) => new Set(Array.from({ length: PARTITIONS }, (_, partition) => keyspace.shardOf({ trackerId: id, partition }))).size >= 2)!;

test('4 partitions on 4 shards, 2 API + 2 workers, a delivering worker killed mid-batch: exactly once, per-user order kept', async () => {
  await new TrackerStore(redis, keyspace.global).save(
    TrackerSchema.parse({ id: trackerId, name: 'Shop', tokens: [{ token }], partitions: PARTITIONS, destinations: [{ id: 'wh', type: 'local' }] }),
  );
  const ports = [await freePort(), await freePort()];
  for (const port of ports) spawn('api', { PORT: String(port) });
  const workers = [spawn('worker'), spawn('worker')];
  await Promise.all(ports.map((port, i) => waitReady(port, procs[i]!)));

  const post = (i: number, p: string, body: unknown) =>
    fetch(`http://127.0.0.1:${ports[i % 2]}${p}`, { method: 'POST', headers: { Authorization: `Tracker ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const keysOf = (partition: number) => partitionDeliveryKeys(keyspace, { trackerId, destinationId: 'wh', partition });

  let killed = false;
  const killALeaderMidBatch = async () => {
    const partition = await waitFor(
      async () => {
        for (let p = 0; p < PARTITIONS; p++) if (Number(await redis.hget(keysOf(p).status, 'inFlight')) > 0) return p;
        return undefined;
      },
      { intervalMs: 2, message: 'a batch in flight' },
    );
    const pid = Number((await redis.get(keysOf(partition).lock))?.split(':')[1]);
    const leader = workers.find((w) => w.child.pid === pid);
    expect(leader).toBeDefined();
    leader!.child.kill('SIGKILL');
    killed = true;
  };

  const sending = (async () => {
    for (let step = 0; step < STEPS; step++) {
      for (let u = 0; u < USERS; u++) expect((await post(step + u, '/v3/user', { _uid: `u${u}`, step, [`seen_${step}`]: true })).status).toBe(202);
    }
    const batches = Array.from({ length: EVENTS / 50 }, (_, b) => Array.from({ length: 50 }, (_, i) => ({ _event: 'load', _uid: `u${(b * 50 + i) % USERS}`, n: b * 50 + i })));
    await Promise.all(batches.map(async (batch, b) => expect((await post(b, '/v3/event', batch)).status).toBe(202)));
  })();
  await Promise.all([sending, killALeaderMidBatch()]);
  expect(killed).toBe(true);

  const file = path.join(dataDir, 'warehouse', `${trackerId}.duckdb`);
  const counts = await waitForWarehouseRow(file, "select count(*)::int, count(distinct _id)::int from events where _event = 'load'", (row) => row[0] === EVENTS, `${EVENTS} events in the warehouse`, 120_000);
  expect(counts).toEqual([EVENTS, EVENTS]);
  await expectUpdatesInOrder(file, USERS, STEPS);

  // Each partition's records went through its own keys, in its own shard: its delivered count is
  // exactly its share of the users' updates and events.
  for (let p = 0; p < PARTITIONS; p++) {
    const users = Array.from({ length: USERS }, (_, u) => `u${u}`).filter((uid) => partitionOf({ kind: 'user', id: '', uid }, PARTITIONS) === p).length;
    const keys = keysOf(p);
    expect(keys.status.startsWith(keyspace.prefixOf({ trackerId, partition: p }))).toBe(true);
    const delivered = Number(await redis.hget(keys.status, 'delivered'));
    // Records re-sent after the kill are written again (idempotently) and counted again: at least the share.
    expect(delivered).toBeGreaterThanOrEqual(users * STEPS + (EVENTS / USERS) * users);
  }
  const shards = new Set(Array.from({ length: PARTITIONS }, (_, partition) => keyspace.shardOf({ trackerId, partition })));
  for (const shard of shards) expect(Number(await redis.get(`${keyspace.shardPrefix(shard)}:router:last-job`))).toBeGreaterThan(0);
});
