import { Queue, Worker } from 'bullmq';
import { Redis, type Cluster } from 'ioredis';
import { INGEST_QUEUE, newIngestJob, type IngestJobData } from '../../../jobs/routing/ingest-job';
import type { TrackedRecord } from '../../../src/core/records/types';
import { createLogger } from '../../../src/core/logger';
import { createCluster, createRedisClient, duplicateClient, infoMemoryOfMasters, isCluster, nodeForKey, parseInfoMemory, slotOf, waitForReplicas, whenConnected } from '../../../src/core/redis/cluster';
import type { ClusterSeeds } from '../../../src/core/redis/cluster-nodes';
import { freePort } from '../../helpers/ports';
import { Keyspace } from '../../../src/core/redis/keyspace';
import { DEFAULT_MEMORY_BUDGET, MemoryBudget } from '../../../src/core/redis/memory-budget';
import type { RedisRole } from '../../../src/core/redis/redis';
import { bucketExpiresAt, dedupArgs, dedupKeys, dedupMember, DUPLICATES_TTL_MS } from '../../../src/ingest/dedup';
import { JobAdd } from '../../../src/ingest/job-add';
import { queuedJobRecords } from '../../helpers/queued-jobs';
import { OwnRedisCluster } from '../../helpers/redis-cluster';
import { TEST_REDIS_URL } from '../../helpers/redis';
import { waitFor } from '../../helpers/wait';

/**
 * The Redis Cluster client and its helpers against a real cluster of the test's own (3 masters,
 * 3 replicas): the roles, the node that owns a key, WAIT on the right master, INFO memory of every
 * master, BullMQ and the keyed add on hash-tagged prefixes, and a master's failover last.
 */
jest.setTimeout(60_000);

let cluster: OwnRedisCluster;
let seeds: ClusterSeeds;
const opened: Array<Cluster | Redis> = [];

beforeAll(async () => {
  cluster = await OwnRedisCluster.start();
  seeds = { nodes: cluster.seeds, tls: false, username: undefined, password: undefined };
});
afterAll(async () => {
  // QUIT, so that every socket is closed by the server before it goes (no stray disconnect timers).
  await Promise.all(opened.map((client) => (client.status === 'ready' ? client.quit() : client.disconnect())));
  await cluster?.stop();
});

async function connect(role: RedisRole): Promise<Cluster> {
  const client = createCluster(seeds, role);
  opened.push(client);
  await whenConnected(client);
  return client;
}

/** Keys whose hash tags spread them over every master. */
const tagged = Array.from({ length: 24 }, (_, i) => `{t:${i}}:key`);

const event = (id: string): TrackedRecord => ({ kind: 'event', id, receivedAt: '2026-11-25T00:00:00.000Z', event: 'signup', properties: { n: 1 } });

describe('the roles', () => {
  test('a producer answers at once from its first commands, on every master', async () => {
    const producer = await connect('producer');
    // No offline queue: without its connections opened up front, most of these would be refused.
    const answers = await Promise.allSettled(tagged.map((key) => producer.set(key, 'v')));
    expect(answers.filter((a) => a.status === 'rejected')).toEqual([]);
    expect(new Set(await Promise.all(tagged.map((key) => cluster.masterPortFor(key)))).size).toBe(3);
  });

  test('whenConnected: a producer is connected to every master, so that its first commands without a key (BullMQ’s INFO) are answered', async () => {
    // Once 'ready' alone, about one fresh producer in ten refused one of these ("Connection is closed."):
    // the slot map was read, a master's own connection was still opening.
    const refused: string[] = [];
    for (let i = 0; i < 40; i++) {
      const producer = createCluster(seeds, 'producer');
      await whenConnected(producer);
      expect(producer.nodes('master').map((node) => node.status)).toEqual(['ready', 'ready', 'ready']);
      const answers = await Promise.allSettled([producer.info('server'), producer.info('server'), producer.info('server'), producer.info('server')]);
      for (const a of answers) if (a.status === 'rejected') refused.push(String((a.reason as Error).message));
      producer.disconnect();
    }
    expect(refused).toEqual([]);
  });

  test('whenConnected says, every 10 s, what it still waits for, and gives up when the client is closed', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate'] });
    try {
      const port = await freePort();
      const producer = createCluster({ ...seeds, nodes: [{ host: '127.0.0.1', port }] }, 'producer');
      opened.push(producer);
      const heard: string[][] = [];
      const waiting = whenConnected(producer, (pending) => heard.push(pending));
      await jest.advanceTimersByTimeAsync(10_100);
      expect(heard).toHaveLength(1);
      expect(heard[0]![0]).toMatch(/^cluster \(/);
      const givenUp = expect(waiting).rejects.toThrow('closed before it was up');
      producer.disconnect();
      await jest.advanceTimersByTimeAsync(100);
      await givenUp;
    } finally {
      jest.useRealTimers();
    }
  });

  test('a producer whose seeds do not answer fails at once', async () => {
    const nowhere = createCluster({ ...seeds, nodes: [{ host: '127.0.0.1', port: await freePort() }] }, 'producer');
    opened.push(nowhere);
    const started = Date.now();
    await expect(nowhere.set('k', 'v')).rejects.toThrow(/isn't ready and enableOfflineQueue options is false/);
    expect(Date.now() - started).toBeLessThan(500);
  });

  test('BullMQ takes the worker role for a Worker and refuses the producer role', async () => {
    const producer = await connect('producer');
    // The Worker refuses its blocking connection (a duplicate of the one given) after opening it.
    const duplicate = jest.spyOn(producer, 'duplicate');
    try {
      expect(() => new Worker('refused', async () => undefined, { connection: producer, prefix: '{t:refused}', autorun: false })).toThrow(/maxRetriesPerRequest must be null/);
    } finally {
      for (const made of duplicate.mock.results) (made.value as Cluster).disconnect();
      duplicate.mockRestore();
    }
    const worker = new Worker('accepted', async () => undefined, { connection: await connect('worker'), prefix: '{t:accepted}', autorun: false });
    await worker.close();
  });

  test('createRedisClient: a Cluster for cluster nodes, one Redis for a URL, an error for neither', async () => {
    const onCluster = createRedisClient({ redisUrl: undefined, redisCluster: seeds }, 'producer');
    opened.push(onCluster);
    expect(isCluster(onCluster)).toBe(true);
    await waitFor(() => onCluster.status === 'ready');
    expect(await onCluster.set('{t:0}:via-target', '1')).toBe('OK');
    const single = createRedisClient({ redisUrl: TEST_REDIS_URL, redisCluster: undefined }, 'producer');
    opened.push(single);
    expect(single).toBeInstanceOf(Redis);
    expect(isCluster(single)).toBe(false);
    await waitFor(() => single.status === 'ready');
    expect(() => createRedisClient({ redisUrl: undefined, redisCluster: undefined }, 'producer')).toThrow(/No Redis to connect to/);
  });
});

describe('slots and nodes', () => {
  test('slotOf is the slot Redis computes, hash tags included', async () => {
    const producer = await connect('producer');
    for (const key of ['a', '{t:0}:ingest:wait', '{t:0}', 'foo{bar}baz', '{}x', '{{x}}', 'tributary:tracker:abc', ...tagged]) {
      expect(slotOf(key)).toBe(Number(await producer.cluster('KEYSLOT', key)));
    }
    expect(slotOf('{t:0}:ingest:wait')).toBe(slotOf('{t:0}:dupes:x'));
  });

  test('nodeForKey is the connection to the master that serves the key', async () => {
    const producer = await connect('producer');
    for (const key of tagged) {
      const node = nodeForKey(producer, key);
      expect(node.options.port).toBe(await cluster.masterPortFor(key));
      expect(producer.nodes('master')).toContain(node);
    }
  });

  test('the keyspace’s shards spread over the masters: with three shards, each on a master of its own', async () => {
    const producer = await connect('producer');
    const keyspace = new Keyspace('tributary', 3);
    const masters = [0, 1, 2].map((s) => nodeForKey(producer, `${keyspace.shardPrefix(s)}:ingest:wait`).options.port);
    expect(new Set(masters).size).toBe(3);
    expect(nodeForKey(producer, `${keyspace.global}:trackers`).options.port).toEqual(expect.any(Number));
  });

  test('waitForReplicas: one WAIT on each master that took a write; a master whose replica is stopped answers 0', async () => {
    const producer = await connect('producer');
    const keys = tagged.slice(0, 6);
    await Promise.all(keys.map((key) => producer.set(key, 'acked')));
    expect(await waitForReplicas(producer, keys, 1, 2000)).toBe(1);

    // WAIT on another master's connection would answer 1 at once: it has no writes of its own to wait for.
    const key = tagged[0]!;
    const master = await cluster.masterPortFor(key);
    const topology = await cluster.topology();
    const replica = topology.find((n) => n.masterId === topology.find((m) => m.port === master)!.id)!.port;
    const elsewhere = tagged.find((k) => nodeForKey(producer, k).options.port !== master)!;
    cluster.pause(replica);
    try {
      await producer.set(key, 'not yet replicated');
      expect(await waitForReplicas(producer, [key], 1, 300)).toBe(0);
      expect(await waitForReplicas(producer, [elsewhere, key], 1, 300)).toBe(0);
      expect(await nodeForKey(producer, elsewhere).wait(1, 300)).toBe(1);
    } finally {
      cluster.resume(replica);
    }
    expect(await waitForReplicas(producer, [key], 1, 5000)).toBe(1);
  });

  test('one Redis: waitForReplicas is its WAIT', async () => {
    const single = new Redis(TEST_REDIS_URL);
    opened.push(single);
    expect(await waitForReplicas(single, [], 0, 100)).toBe(0);
  });
});

test('infoMemoryOfMasters: used and maxmemory of each master, each its own', async () => {
  const producer = await connect('producer');
  const key = tagged[0]!;
  const limited = nodeForKey(producer, key);
  await limited.config('SET', 'maxmemory', String(64 * 1024 * 1024));
  try {
    const { masters, unanswered } = await infoMemoryOfMasters(producer);
    expect(unanswered).toEqual([]);
    expect(masters.map((m) => m.node).sort()).toEqual((await cluster.masterPorts()).map((p) => `127.0.0.1:${p}`).sort());
    for (const m of masters) {
      expect(m.usedBytes).toBeGreaterThan(0);
      expect(m.policy).toBe('noeviction');
      expect(m.maxmemoryBytes).toBe(m.node === `127.0.0.1:${limited.options.port}` ? 64 * 1024 * 1024 : 0);
    }
  } finally {
    await limited.config('SET', 'maxmemory', '0');
  }
});

test('a master that does not answer is left out of INFO memory, not waited for', async () => {
  const producer = await connect('producer');
  const silent = nodeForKey(producer, tagged[0]!);
  // Paused well below cluster-node-timeout, so that no failover starts.
  cluster.pause(silent.options.port!);
  try {
    const { masters, unanswered } = await infoMemoryOfMasters(producer, { timeoutMs: 200 });
    expect(unanswered).toEqual([`127.0.0.1:${silent.options.port}`]);
    expect(masters).toHaveLength(2);
  } finally {
    cluster.resume(silent.options.port!);
  }
});

test('the memory budget judges the master nearest its limit', async () => {
  const producer = await connect('producer');
  const full = nodeForKey(producer, tagged[0]!);
  const roomy = nodeForKey(producer, tagged.find((key) => nodeForKey(producer, key) !== full)!);
  const used = async (node: Redis) => parseInfoMemory('', await node.info('memory')).usedBytes;
  const fullLimit = Math.ceil((await used(full)) / 0.95);
  await roomy.config('SET', 'maxmemory', String((await used(roomy)) * 2));
  await full.config('SET', 'maxmemory', String(fullLimit));
  try {
    const budget = new MemoryBudget(producer, createLogger('silent'), DEFAULT_MEMORY_BUDGET);
    const snapshot = await budget.sample();
    expect(snapshot).toMatchObject({ state: 'full', limitBytes: fullLimit, limitSource: 'redis', policy: 'noeviction' });
    expect(budget.admits()).toBe(false);
  } finally {
    await Promise.all([full, roomy].map((node) => node.config('SET', 'maxmemory', '0')));
  }
});

describe('BullMQ on a cluster, with a hash-tagged prefix', () => {
  test('a Queue adds, a Worker processes; every key of the queue is in the tag’s slot, on one master', async () => {
    const producer = await connect('producer');
    const queue = new Queue<{ n: number }>('cluster-check', { connection: producer, prefix: '{t:0}' });
    const processed: number[] = [];
    const worker = new Worker<{ n: number }>('cluster-check', async (job) => void processed.push(job.data.n), { connection: await connect('worker'), prefix: '{t:0}' });
    try {
      await queue.add('n', { n: 1 });
      await queue.addBulk([{ name: 'n', data: { n: 2 } }, { name: 'n', data: { n: 3 } }]);
      await waitFor(() => processed.length === 3, { message: 'three jobs processed' });
      expect(processed.sort()).toEqual([1, 2, 3]);
      const owner = nodeForKey(producer, '{t:0}');
      const keys = await owner.keys('{t:0}:cluster-check:*');
      expect(keys.length).toBeGreaterThan(0);
      expect(new Set(keys.map(slotOf))).toEqual(new Set([slotOf('{t:0}')]));
      // Through BullMQ's adapter of the connection, as the group commit reaches it: WAIT on the queue's master.
      const client = (await queue.getBackend().connection.client) as unknown as Cluster;
      expect(isCluster(client)).toBe(true);
      expect(nodeForKey(client, '{t:0}')).toBe(owner);
      expect(await waitForReplicas(client, ['{t:0}'], 1, 2000)).toBe(1);
    } finally {
      await worker.close();
      await queue.close();
    }
  });

  test('the job add (BullMQ’s add, the records and the dedup markers as one script) works through the cluster client', async () => {
    const producer = await connect('producer');
    const prefix = '{t:1}';
    const queue = new Queue<IngestJobData>(INGEST_QUEUE, { connection: producer, prefix });
    const keyed = new JobAdd(queue);
    const now = Date.now();
    const add = (token: string, ids: string[]) =>
      keyed.add(newIngestJob('tracker-1', ids.map(event), false, token), {
        keys: dedupKeys(prefix, 'tracker-1', token, 1, now),
        args: dedupArgs(bucketExpiresAt(1, now), DUPLICATES_TTL_MS, ids.map((id) => dedupMember('event', id)), ids.map((_, i) => i)),
      });
    try {
      expect(await add('token-a', ['k-1', 'k-2'])).toEqual([0, 0]);
      expect(await add('token-b', ['k-2', 'k-3'])).toEqual([1, 0]);
      const jobs = await queue.getJobs(['wait']);
      const records = await Promise.all(jobs.map((j) => queuedJobRecords(producer, queue, j)));
      expect(records.map((list) => list.map((r) => r.id)).sort()).toEqual([['k-1', 'k-2'], ['k-2', 'k-3']]);
      // The records key is in the queue's slot, beside the job.
      const owner = nodeForKey(producer, prefix);
      expect(new Set((await owner.keys(`${prefix}:${INGEST_QUEUE}:*`)).map(slotOf))).toEqual(new Set([slotOf(prefix)]));
      expect(await owner.keys(`${prefix}:${INGEST_QUEUE}:*:records`)).toHaveLength(2);
      expect(await producer.get(`${prefix}:dupes:token-b`)).toBe('0');
    } finally {
      await queue.close();
    }
  });

  test('markers outside the queue’s hash tag: Redis refuses the script (CROSSSLOT), nothing is added', async () => {
    const producer = await connect('producer');
    const queue = new Queue<IngestJobData>(INGEST_QUEUE, { connection: producer, prefix: '{t:2}' });
    const keyed = new JobAdd(queue);
    const now = Date.now();
    try {
      const outside = dedupKeys('{t:3}', 'tracker-1', 'token-c', 1, now);
      await expect(keyed.add(newIngestJob('tracker-1', [event('x')], false, 'token-c'), { keys: outside, args: dedupArgs(bucketExpiresAt(1, now), DUPLICATES_TTL_MS, [dedupMember('event', 'x')], [0]) })).rejects.toThrow(/CROSSSLOT/);
      expect(await queue.getJobCounts('wait')).toEqual({ wait: 0 });
    } finally {
      await queue.close();
    }
  });
});

test('duplicateClient: a blocking XREAD on a copy of the client, which reads no slot map on a timer', async () => {
  const worker = await connect('worker');
  const blocking = duplicateClient(worker) as Cluster;
  opened.push(blocking);
  expect(isCluster(blocking)).toBe(true);
  expect(blocking.options).toMatchObject({ slotsRefreshInterval: 0, enableOfflineQueue: true, redisOptions: { maxRetriesPerRequest: null } });
  const stream = '{t:4}:dest:tracker-1:d1:stream';
  // From 0-0 on a new stream: blocks until the first entry, whether it comes before or after the read.
  const read = blocking.xread('COUNT', 1, 'BLOCK', 5000, 'STREAMS', stream, '0-0');
  await worker.xadd(stream, '*', 'r', 'record');
  expect((await read)?.[0]?.[1]?.[0]?.[1]).toEqual(['r', 'record']);

  const original = new Redis(TEST_REDIS_URL);
  const single = duplicateClient(original) as Redis;
  opened.push(original, single);
  expect(isCluster(single)).toBe(false);
});

test('pub/sub through cluster clients (as the live view uses it): a subscriber hears what another client publishes', async () => {
  const producer = await connect('producer');
  const subscriber = await connect('worker');
  const heard = new Promise<[string, string]>((resolve) => subscriber.on('message', (channel: string, message: string) => resolve([channel, message])));
  await subscriber.subscribe('{t:0}:live:channel:tracker-1');
  // Classic PUBLISH reaches every node over the cluster bus, whichever node the subscriber is on.
  await producer.publish('{t:0}:live:channel:tracker-1', 'entry');
  expect(await heard).toEqual(['{t:0}:live:channel:tracker-1', 'entry']);
});

test('a master killed: the producer fails at once, the worker waits through the failover, both carry on', async () => {
  const producer = await connect('producer');
  const worker = await connect('worker');
  const key = tagged[5]!;
  const victim = await cluster.masterPortFor(key);
  await cluster.killMaster(victim);

  const started = Date.now();
  await expect(producer.set(key, 'during')).rejects.toThrow();
  expect(Date.now() - started).toBeLessThan(500);
  const waiting = worker.set(key, 'through');

  const heir = await cluster.waitForFailover(victim);
  expect(await waiting).toBe('OK');
  await waitFor(() => producer.set(key, 'after').then(() => true, () => false), { message: 'the producer writing to the new master' });
  expect(nodeForKey(producer, key).options.port).toBe(heir);
  expect(await worker.get(key)).toBe('after');
});
