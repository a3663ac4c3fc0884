import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Cluster, Redis } from 'ioredis';
import { partitionDeliveryKeys } from '../jobs/delivery/keys';
import { freePort } from '../src/core/redis/embedded-redis';
import { Keyspace } from '../src/core/redis/keyspace';
import { TrackerStore } from '../src/core/trackers/store';
import { generateToken } from '../src/core/trackers/tokens';
import { TrackerSchema, type Tracker } from '../src/core/trackers/types';
import { OwnRedisCluster } from '../test/helpers/redis-cluster';
import { ask, buildChildren, compiledPath, forkChild, nextMessage, serverNodeFlags, stopChild, type Message } from './child';
import type { LoadPlan, LoadResult } from './load-generator';
import { processCpuSeconds, redisCpuSeconds } from './proc-stats';
import { poll } from './tributary-server';
import { fmt } from './format';

/**
 * `npm run bench:scale [-- --duration 6 --workers 1,2,4 --redis single,cluster --partitions 1,4]`
 *
 * End-to-end records per second of one hot tracker, in arrays of 100 ~300-byte events, with 1, 2
 * and 4 worker processes (`server.js worker`), on one Redis and on a Redis Cluster of 3 masters
 * (each with a replica) that the benchmark starts itself, with the tracker in 1 and in 4
 * partitions. One API process, the workers and the load generator each run in a process of their
 * own; Redis too. Each configuration runs in two phases, so that each stage's CPU is its own:
 *
 * 1. **ingest and route**: the tracker's local destination is disabled; the load generator sends
 *    for `duration` seconds; the phase ends when the router has moved every accepted record to the
 *    destination's streams. CPU of the API process → API; of the workers → router.
 * 2. **deliver**: the destination is enabled; the phase ends when every record is in the local
 *    warehouse. CPU of the workers → connector (the delivery loop and the DuckDB writes).
 *
 * Redis CPU (INFO cpu, every master) is counted over both. BENCH_WORKER_NODE_ARGS passes node options
 * to the workers (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`). Printed per configuration: records/s
 * of each phase, the end-to-end figure of the pipeline (records over the time of both phases: a
 * pipeline that ingests and delivers at once is bounded by it), and CPU µs per record by stage.
 */
const { values: args } = parseArgs({
  options: {
    duration: { type: 'string' },
    workers: { type: 'string' },
    redis: { type: 'string' },
    partitions: { type: 'string' },
    connections: { type: 'string' },
  },
});

const list = (raw: string | undefined, def: string) => (raw ?? def).split(',').map((s) => s.trim());
const numbers = (raw: string | undefined, def: string) => list(raw, def).map(Number);
const settings = {
  duration: Number(args.duration ?? process.env.BENCH_DURATION ?? 6),
  workers: numbers(args.workers ?? process.env.BENCH_WORKERS, '1,2,4'),
  redis: list(args.redis ?? process.env.BENCH_REDIS, 'single,cluster') as Array<'single' | 'cluster'>,
  partitions: numbers(args.partitions ?? process.env.BENCH_PARTITIONS, '1,4'),
  connections: Number(args.connections ?? process.env.BENCH_CONNECTIONS ?? 16),
  batch: 100,
  /** Shards of the keyspace: on one Redis, routing steps in parallel; on the cluster, spread over its masters. */
  shards: { single: 4, cluster: 12 },
};

/** Where the processes find Redis, and how the benchmark reads it. */
interface RedisUnderTest {
  kind: 'single' | 'cluster';
  env: Record<string, string>;
  client: Redis | Cluster;
  /** CPU seconds used by every master so far (INFO cpu). */
  cpuSeconds: () => Promise<number>;
  stop: () => Promise<void>;
}

async function startSingleRedis(): Promise<RedisUnderTest> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-scale-redis-'));
  const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
  const client = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 20 });
  // The server may not listen yet: the client retries until it does.
  client.on('error', () => undefined);
  await client.ping();
  return {
    kind: 'single',
    env: { REDIS_URL: `redis://127.0.0.1:${port}` },
    client,
    cpuSeconds: () => redisCpuSeconds(client),
    stop: async () => {
      client.disconnect();
      server.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function startClusterRedis(): Promise<RedisUnderTest> {
  const cluster = await OwnRedisCluster.start();
  const seeds = cluster.seeds;
  const client = new Cluster(seeds.map((s) => ({ host: s.host, port: s.port })), { redisOptions: { maxRetriesPerRequest: 3 } });
  client.on('error', () => undefined);
  await client.ping();
  return {
    kind: 'cluster',
    env: { REDIS_CLUSTER_NODES: seeds.map((s) => `${s.host}:${s.port}`).join(',') },
    client,
    cpuSeconds: async () => (await Promise.all(client.nodes('master').map(redisCpuSeconds))).reduce((a, b) => a + b, 0),
    stop: async () => {
      client.disconnect();
      await cluster.stop();
    },
  };
}

/** Node options for the worker processes, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` (BENCH_WORKER_NODE_ARGS). */
const WORKER_NODE_ARGS = (process.env.BENCH_WORKER_NODE_ARGS ?? '').split(' ').filter(Boolean);

function startServer(role: 'api' | 'worker', env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [...serverNodeFlags(role), ...(role === 'worker' ? WORKER_NODE_ARGS : []), compiledPath('src/boot/server.ts'), role], { env: { ...process.env, LOG_LEVEL: 'warn', TRIBUTARY_CONFIG: '', PUBLIC_URL: '', ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
}

interface Figures {
  accepted: number;
  ingestPerSecond: number;
  routedPerSecond: number;
  deliveredPerSecond: number;
  endToEndPerSecond: number;
  cpuMicros: { api: number; redis: number; router: number; connector: number };
}

async function measure(redis: RedisUnderTest, workers: number, partitions: number, loader: ChildProcess): Promise<Figures> {
  const prefix = `bench-scale-${randomBytes(4).toString('hex')}`;
  const keyspace = new Keyspace(prefix, settings.shards[redis.kind]);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-scale-'));
  const token = generateToken();
  const store = new TrackerStore(redis.client, keyspace.global);
  const tracker: Tracker = TrackerSchema.parse({ id: 'hot', name: 'Hot', tokens: [{ token }], partitions, destinations: [{ id: 'wh', type: 'local', enabled: false }] });
  await store.save(tracker);
  // No spilling: the backlog of phase 1 stays in Redis, where the router put it.
  const env = { ...redis.env, REDIS_PREFIX: prefix, REDIS_SHARDS: String(keyspace.shards), DATA_DIR: dataDir, DELIVERY_DISCOVER_INTERVAL_MS: '100', DESTINATION_REDIS_CAP_RECORDS: '100000000', HOST: '127.0.0.1' };
  const port = await freePort();
  const api = startServer('api', { ...env, PORT: String(port), ADMIN_TOKEN: `adm_${randomBytes(24).toString('base64url')}` });
  const workerProcs = Array.from({ length: workers }, () => startServer('worker', env));
  const keys = Array.from({ length: partitions }, (_, partition) => partitionDeliveryKeys(keyspace, { trackerId: 'hot', destinationId: 'wh', partition }));
  const sum = async (field: (k: (typeof keys)[number]) => Promise<string | null>) => (await Promise.all(keys.map(field))).reduce((n, v) => n + Number(v ?? 0), 0);
  try {
    await poll('the API answering /readyz', async () => ((await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200 ? true : undefined), 180_000, 50);
    await new Promise((r) => setTimeout(r, 1000)); // workers connected and routing
    const workerCpu = () => workerProcs.reduce((n, w) => n + processCpuSeconds(w.pid), 0);

    const cpu0 = { api: processCpuSeconds(api.pid), workers: workerCpu(), redis: await redis.cpuSeconds() };
    const started = performance.now();
    const plan: LoadPlan = { url: `http://127.0.0.1:${port}`, path: '/v3/event', connections: settings.connections, duration: settings.duration, recordsPerRequest: settings.batch, authorization: `Tracker ${token}`, seed: 7 };
    const load = (await ask<Message & { result: LoadResult }>(loader, { type: 'run', plan: plan as unknown as Message[string] }, 'result', (settings.duration + 60) * 1000)).result;
    const ingestSeconds = (performance.now() - started) / 1000;
    const accepted = (load.statusCodes['202'] ?? 0) * settings.batch;
    await poll('every accepted record routed', async () => ((await sum((k) => redis.client.get(k.queued))) >= accepted ? true : undefined), 180_000, 50);
    const routedSeconds = (performance.now() - started) / 1000;
    const cpu1 = { api: processCpuSeconds(api.pid), workers: workerCpu(), redis: await redis.cpuSeconds() };

    await store.update('hot', (t) => ({ ...t, destinations: t.destinations.map((d) => ({ ...d, enabled: true })) }));
    const delivering = performance.now();
    await poll('every record delivered', async () => ((await sum((k) => redis.client.hget(k.status, 'delivered'))) >= accepted ? true : undefined), 600_000, 100);
    const deliverSeconds = (performance.now() - delivering) / 1000;
    const cpu2 = { workers: workerCpu(), redis: await redis.cpuSeconds() };
    const micros = (seconds: number) => (seconds / accepted) * 1e6;
    return {
      accepted,
      ingestPerSecond: accepted / ingestSeconds,
      routedPerSecond: accepted / routedSeconds,
      deliveredPerSecond: accepted / deliverSeconds,
      endToEndPerSecond: accepted / (routedSeconds + deliverSeconds),
      cpuMicros: { api: micros(cpu1.api - cpu0.api), redis: micros(cpu2.redis - cpu0.redis), router: micros(cpu1.workers - cpu0.workers), connector: micros(cpu2.workers - cpu1.workers) },
    };
  } finally {
    for (const p of [api, ...workerProcs]) p.kill('SIGTERM');
    await Promise.all([api, ...workerProcs].map((p) => stopChild(p, 10_000)));
    await deleteKeys(redis.client, prefix);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Every key of the run's prefix, on every master. */
async function deleteKeys(client: Redis | Cluster, prefix: string): Promise<void> {
  const nodes = client instanceof Cluster ? client.nodes('master') : [client];
  for (const node of nodes) {
    for (const pattern of [`{${prefix}}*`, `{${prefix}:*`, `${prefix}:*`]) {
      let cursor = '0';
      do {
        const [next, found] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        cursor = next;
        // One key at a time: keys of different slots may not go in one DEL on a cluster.
        for (const key of found) await node.del(key);
      } while (cursor !== '0');
    }
  }
}

async function main(): Promise<void> {
  console.log(`# bench:scale  ${new Date().toISOString()}`);
  console.log(`machine: ${os.cpus().length} × ${os.cpus()[0]?.model.split(' ').slice(0, 2).join(' ')}, ${fmt(os.totalmem() / 2 ** 30, 1)} GiB; node ${process.version}`);
  console.log(`settings: ${settings.duration} s of load per configuration, arrays of ${settings.batch} events, ${settings.connections} connections; 1 API process; shards: ${settings.shards.single} on one Redis, ${settings.shards.cluster} on the cluster; destination: the local warehouse`);
  buildChildren();
  const loader = forkChild('load-generator.js');
  await nextMessage(loader, 'ready');
  const rows: Array<{ redis: string; workers: number; partitions: number; f: Figures }> = [];
  try {
    for (const kind of settings.redis) {
      const redis = kind === 'single' ? await startSingleRedis() : await startClusterRedis();
      try {
        for (const partitions of settings.partitions) {
          for (const workers of settings.workers) {
            const f = await measure(redis, workers, partitions, loader);
            rows.push({ redis: kind, workers, partitions, f });
            const c = f.cpuMicros;
            console.log(
              `${kind.padEnd(7)} workers ${workers}  partitions ${partitions}  ` +
                `ingest ${fmt(f.ingestPerSecond).padStart(7)}/s  routed ${fmt(f.routedPerSecond).padStart(7)}/s  delivered ${fmt(f.deliveredPerSecond).padStart(7)}/s  end to end ${fmt(f.endToEndPerSecond).padStart(7)}/s  ` +
                `| µs/record: API ${fmt(c.api, 1)}  Redis ${fmt(c.redis, 1)}  router ${fmt(c.router, 1)}  connector ${fmt(c.connector, 1)}  (${fmt(f.accepted)} records)`,
            );
          }
        }
      } finally {
        await redis.stop();
      }
    }
  } finally {
    loader.send({ type: 'stop' });
    await stopChild(loader, 5_000);
  }
  const base = rows[0];
  if (base) {
    console.log('');
    console.log(`ratio to the first configuration (${base.redis}, ${base.workers} worker, ${base.partitions} partition), end to end:`);
    for (const r of rows) console.log(`  ${r.redis.padEnd(7)} workers ${r.workers}  partitions ${r.partitions}  ${fmt(r.f.endToEndPerSecond / base.f.endToEndPerSecond, 2)}×`);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
