import { existsSync } from 'node:fs';
import { Cluster } from 'ioredis';
import { OwnRedisCluster } from './redis-cluster';

/**
 * The cluster harness itself: 3 masters and 3 replicas of the test's own, keys with different hash
 * tags spread over the masters, a master's kill -9 taken over by its replica, everything gone after.
 */
jest.setTimeout(60_000);

let cluster: OwnRedisCluster;
let client: Cluster | undefined;

beforeAll(async () => {
  cluster = await OwnRedisCluster.start();
});
afterAll(async () => {
  client?.disconnect();
  await cluster?.stop();
});

const tags = Array.from({ length: 12 }, (_, i) => `{t:${i}}:probe`);

test('three masters, each with one replica following it', async () => {
  const topology = await cluster.topology();
  const masters = topology.filter((n) => n.role === 'master');
  const replicas = topology.filter((n) => n.role === 'replica');
  expect(masters).toHaveLength(3);
  expect(replicas).toHaveLength(3);
  expect(new Set(replicas.map((r) => r.masterId))).toEqual(new Set(masters.map((m) => m.id)));
  expect(masters.reduce((sum, m) => sum + m.slots.reduce((n, [from, to]) => n + to - from + 1, 0), 0)).toBe(16384);
  expect(new Set(topology.map((n) => n.port))).toEqual(new Set(cluster.ports));
  expect(cluster.seedList.split(',')).toHaveLength(6);
});

test('keys with different hash tags land on at least two masters', async () => {
  client = new Cluster(cluster.seeds);
  for (const key of tags) await client.set(key, key);
  const owners = new Set(await Promise.all(tags.map((key) => cluster.masterPortFor(key))));
  expect(owners.size).toBeGreaterThanOrEqual(2);
  expect(await Promise.all(tags.map((key) => client!.get(key)))).toEqual(tags);
});

test('kill -9 of a master: its replica takes over and serves what the master had replicated', async () => {
  const key = tags[0]!;
  const victim = await cluster.masterPortFor(key);
  const before = await cluster.topology();
  const victimId = before.find((n) => n.port === victim)!.id;
  const replicaPorts = before.filter((n) => n.masterId === victimId).map((n) => n.port);
  await client!.set(key, 'acknowledged');
  const master = client!.nodes('master').find((n) => n.options.port === victim)!;
  expect(await master.wait(1, 2000)).toBe(1);

  await cluster.killMaster(victim);
  const heir = await cluster.waitForFailover(victim);
  expect(replicaPorts).toContain(heir);
  expect(await cluster.masterPortFor(key)).toBe(heir);
  expect(await client!.get(key)).toBe('acknowledged');

  await cluster.revive(victim);
  expect((await cluster.topology()).find((n) => n.port === victim)).toMatchObject({ role: 'replica', failing: false });
});

test('stop kills every redis-server by its PID and removes the data directories', async () => {
  client?.disconnect();
  client = undefined;
  const pids = cluster.pids;
  expect(pids).toHaveLength(6);
  await cluster.stop();
  for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow(/ESRCH/);
  expect(existsSync(cluster.dir)).toBe(false);
});
