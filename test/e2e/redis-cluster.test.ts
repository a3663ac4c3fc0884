import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Cluster } from 'ioredis';
import { partitionDeliveryKeys } from '../../jobs/delivery/keys';
import { Keyspace } from '../../src/core/redis/keyspace';
import { TrackerStore } from '../../src/core/trackers/store';
import { generateToken } from '../../src/core/trackers/tokens';
import { TrackerSchema } from '../../src/core/trackers/types';
import { uniquePrefix } from '../helpers/redis';
import { cliRunner } from '../cli/run-cli';
import { OwnRedisCluster } from '../helpers/redis-cluster';
import { freePort } from '../helpers/redis-server';
import { spawnTributary, waitReady, type TributaryProcess } from '../helpers/tributary-process';
import { waitFor } from '../helpers/wait';
import { expectUpdatesInOrder, waitForWarehouseRow } from '../helpers/warehouse';

/**
 * Tributary on a real Redis Cluster of its own (3 masters, 3 replicas): one API and two worker
 * processes with REDIS_CLUSTER_NODES, 6 shards, REDIS_ACK_REPLICAS=1. Three trackers, one of them in
 * three partitions, land on at least two masters. Under load, the master holding one tracker's
 * shard is killed with SIGKILL; clients retry whatever was not answered 2xx, with their client keys.
 * After the replica takes over (and the dead node is back as its replica): every acknowledged record
 * delivered exactly once, every user's updates in the order they were accepted.
 */
jest.setTimeout(240_000);

/** Event batches each tracker sends at least, and at least this many more after the failover. */
const MIN_BATCHES = 30;
const BATCHES_AFTER_FAILOVER = 15;
const USERS = 4;
const STEPS = 8;
const TRACKERS = [
  { id: 'alpha', partitions: 1 },
  { id: 'beta', partitions: 3 },
  { id: 'gamma', partitions: 1 },
];

const prefix = uniquePrefix('rc').replace(/[{}]/g, '');
const keyspace = new Keyspace(prefix, 6);
const dataDir = mkdtempSync(path.join(tmpdir(), 'tributary-rc-'));
const procs: TributaryProcess[] = [];
let cluster: OwnRedisCluster;
let client: Cluster;

beforeAll(async () => {
  cluster = await OwnRedisCluster.start();
  client = new Cluster(cluster.seeds, { redisOptions: { maxRetriesPerRequest: 20 }, retryDelayOnFailover: 300, retryDelayOnClusterDown: 300 });
  client.on('error', () => undefined);
});

afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop('SIGKILL')));
  client?.disconnect();
  await cluster?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test('trackers spread over the masters; a master killed under load with REDIS_ACK_REPLICAS=1: every acknowledged record exactly once, in order', async () => {
  const tokens = new Map(TRACKERS.map((t) => [t.id, generateToken()]));
  // Two workers deliver one tracker's partitions into one warehouse file, which DuckDB lets one
  // process write at a time: their writers take turns (connectors/local/database.ts).
  const store = new TrackerStore(client as never, keyspace.global);
  for (const t of TRACKERS) {
    await store.save(TrackerSchema.parse({ id: t.id, name: t.id, tokens: [{ token: tokens.get(t.id)! }], partitions: t.partitions, destinations: [{ id: 'wh', type: 'local' }] }));
  }
  // Where each tracker partition's keys live: at least two masters between them.
  const partitionsOf = (t: (typeof TRACKERS)[number]) => Array.from({ length: t.partitions }, (_, partition) => ({ trackerId: t.id, partition }));
  const masterOf = new Map<string, number>();
  for (const t of TRACKERS) for (const ref of partitionsOf(t)) masterOf.set(`${ref.trackerId}/${ref.partition}`, await cluster.masterPortFor(keyspace.prefixOf(ref)));
  expect(new Set(masterOf.values()).size).toBeGreaterThanOrEqual(2);

  const env = {
    REDIS_URL: '',
    REDIS_CLUSTER_NODES: cluster.seedList,
    REDIS_PREFIX: prefix,
    REDIS_SHARDS: '6',
    REDIS_ACK_REPLICAS: '1',
    REDIS_ACK_TIMEOUT_MS: '1000',
    DATA_DIR: dataDir,
    DELIVERY_LEASE_MS: '3000',
    DELIVERY_DISCOVER_INTERVAL_MS: '200',
    ROUTER_LOCK_MS: '2000',
  };
  const port = await freePort();
  const api = spawnTributary('api', { ...env, PORT: String(port) });
  procs.push(api, spawnTributary('worker', env), spawnTributary('worker', env));
  await waitReady(port, api, 60_000);

  /** Each relay process's state and the end of its log, for a failure to say which one stopped and why. */
  const relayStates = (): string =>
    procs.map((p, i) => `relay ${i === 0 ? 'api' : `worker ${i}`}: ${p.child.exitCode !== null || p.child.signalCode !== null ? `exited (${p.child.exitCode ?? p.child.signalCode})` : 'running'}; its log ends:\n${p.output().slice(-1500)}`).join('\n');

  /** A client that retries until it gets a 2xx, as a phone or an SDK does: with the same body and so the same keys. */
  let refusals = 0;
  const send = async (trackerId: string, path: string, body: unknown): Promise<void> => {
    let last = 'no answer';
    for (let attempt = 0; attempt < 400; attempt++) {
      const res = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', headers: { Authorization: `Tracker ${tokens.get(trackerId)}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) }).catch((err: unknown) => `no answer: ${(err as Error)?.message ?? String(err)}`);
      // fetch's errors come from another realm than jest's, so they are told apart by type, not instanceof.
      if (typeof res !== 'string' && res.status >= 200 && res.status < 300) return;
      // What the client saw last, so that a failure says why (an answer's status and body, or the connection's error).
      last = typeof res === 'string' ? res : `${res.status} ${(await res.text().catch(() => '')).slice(0, 300)}`;
      refusals++;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`${trackerId} ${path}: no 2xx after 400 attempts; the last: ${last}\n${relayStates()}`);
  };

  // Users' updates, then events until the failover is over and some more: the load spans the kill.
  let failedOverAt: number | undefined;
  const eventsSent = new Map<string, number>();
  const sending = Promise.all(
    TRACKERS.map(async (t) => {
      for (let step = 0; step < STEPS; step++) {
        for (let u = 0; u < USERS; u++) await send(t.id, '/v3/user', { _id: `${t.id}-u${u}-s${step}`, _uid: `u${u}`, step, [`seen_${step}`]: true });
      }
      let after = 0;
      for (let b = 0; b < MIN_BATCHES || after < BATCHES_AFTER_FAILOVER; b++) {
        await send(t.id, '/v3/event', Array.from({ length: 20 }, (_, i) => ({ _id: `${t.id}-e${b * 20 + i}`, _event: 'load', _uid: `u${(b * 20 + i) % USERS}`, n: b * 20 + i })));
        eventsSent.set(t.id, (b + 1) * 20);
        if (failedOverAt !== undefined) after++;
        else await new Promise((r) => setTimeout(r, 20));
      }
    }),
  );

  // Mid-load, the master that holds beta's partition 0 dies.
  const victim = masterOf.get('beta/0')!;
  await waitFor(async () => Number((await client.hget(partitionDeliveryKeys(keyspace, { trackerId: 'beta', destinationId: 'wh', partition: 0 }).status, 'delivered').catch(() => '0')) ?? 0) > 0, { message: 'beta delivering', timeoutMs: 60_000 }).catch((err: Error) => {
    throw new Error(`${err.message}\n${relayStates()}`);
  });
  await cluster.killMaster(victim);
  const promoted = await cluster.waitForFailover(victim);
  expect(promoted).not.toBe(victim);
  // The promoted replica has no replica of its own: until one attaches, REDIS_ACK_REPLICAS=1 answers
  // its shards' writes 503, as it must. The dead node comes back, as an orchestrator restarts it,
  // and joins as the new master's replica.
  await cluster.revive(victim);
  failedOverAt = Date.now();
  await sending;
  // The kill met the load: requests for the dead master's shards were refused (503) and sent again.
  expect(refusals).toBeGreaterThan(0);

  for (const t of TRACKERS) {
    const file = path.join(dataDir, 'warehouse', `${t.id}.duckdb`);
    const sent = eventsSent.get(t.id)!;
    const counts = await waitForWarehouseRow(file, "select count(*)::int, count(distinct _id)::int from events where _event = 'load'", (row) => row[0] === sent, `${sent} events of ${t.id}`, 120_000);
    expect(counts).toEqual([sent, sent]);
    await expectUpdatesInOrder(file, USERS, STEPS);
  }

  // The CLI works the same on the cluster: one destination per tracker, its partitions added up.
  // (A batch is in the warehouse a moment before its partition's cursor moves: poll until all have.)
  const cli = cliRunner(prefix);
  try {
    const wh = await waitFor(
      async () => {
        const listed = await cli.run(['destinations', 'list', 'beta', '--json'], { REDIS_URL: '', REDIS_CLUSTER_NODES: cluster.seedList, REDIS_SHARDS: '6' });
        expect(listed.stderr).toBe('');
        const [first] = JSON.parse(listed.stdout) as Array<{ id: string; status: { delivered: number; queued: number } }>;
        return first?.status.queued === 0 ? first : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200, message: 'beta drained, as the CLI sees it' },
    );
    expect(wh.id).toBe('wh');
    expect(wh.status.delivered).toBeGreaterThanOrEqual(eventsSent.get('beta')! + USERS * STEPS);
  } finally {
    cli.cleanup();
  }
});
