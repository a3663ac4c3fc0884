import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { Redis } from 'ioredis';
import { deliveryKeys } from '../jobs/delivery/keys';
import { generateToken } from '../src/core/trackers/tokens';
import { ask, buildChildren, forkChild, nextMessage, stopChild, type Message } from './child';
import type { PacedPlan, PacedResult } from './paced-load';
import { mainThreadCpuSeconds, processCpuSeconds, threadCpuSeconds } from './proc-stats';
import { deletePrefix } from './queue-records';
import { alternatePairs, median } from './pairs';
import { metric, poll, spawnBenchWorker, startTributary, type BenchTracker, type TributaryServer } from './tributary-server';
import { fmt } from './format';
import { singleBodies } from './events';
import { parseExactJson } from '../src/core/records/exact-json';
import type { RedisClient } from '../src/core/redis/cluster';
import { TrafficCounter } from '../src/http/traffic/traffic-counter';
import type { TrackerResolver } from '../src/ingest/resolver';

/**
 * `npm run bench:cpu`: server CPU a record at fixed offered rates, each figure beside a baseline
 * measured in the same run. On 2 shared cores, requests a second measure the load generator as
 * much as the server; the CPU a server spends on a fixed load does not.
 *
 * - **single**: one-event requests at `BENCH_CPU_RATE`/s to the Koa floor (Koa and the router
 *   answering 202, bench/koa-floor-server.ts) and to the API (`npm run start:api`), in
 *   alternated pairs: server CPU a request (from /proc), and p99. Then the shape floor (the Koa
 *   floor putting each millisecond's requests into one BullMQ job before their 202) in pairs with
 *   the Koa floor and in pairs with the API: what the fixed shape itself costs, and what Tributary
 *   adds to it.
 * - **array**: arrays of 100 at `BENCH_CPU_ARRAY_RATE` requests/s, same pairs: CPU a record.
 * - **features**: each per-request feature a user can switch off, off against on in alternated
 *   pairs at the single rate: the CPU it adds a request.
 * - **segment**: the same keyed events, arrays of 100 at `BENCH_CPU_ARRAY_RATE` requests/s, as v3
 *   arrays and as Segment batches to `/v1/batch`, in alternated pairs on one API: CPU a record each.
 * - **delivery**: the API and a worker (`npm run start:worker`) apart, arrays at
 *   `BENCH_CPU_DELIVERY_RATE` records/s into the local warehouse: the worker's CPU (router, delivery
 *   loop, DuckDB) a record delivered, over a steady window after a warmup.
 *   `BENCH_CPU_DELIVERY_SIZE` records a request (default 100; 1 for single events, which cost the
 *   worker a routing step each). `BENCH_THREADS=1` also prints the worker's CPU by thread, as its
 *   offset from the process id: +0 is the main thread, V8's helpers and then libuv's pool (where
 *   DuckDB's statements run) follow it. The Koa floor's CPU a single-event request, measured just
 *   before, is printed beside it: how fast the machine is, for an absolute goal.
 *
 * `BENCH_CPU_ONLY` picks sections (comma-separated), `BENCH_CPU_PAIRS` and `BENCH_CPU_SECONDS`
 * set the pairs and the seconds of each run. Figures: bench/RESULTS.md.
 */
const num = (name: string, def: number): number => {
  const raw = process.env[name];
  const n = raw === undefined ? def : Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got ${raw}`);
  return n;
};
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const RATE = num('BENCH_CPU_RATE', 2000);
const ARRAY_RATE = num('BENCH_CPU_ARRAY_RATE', 100);
const DELIVERY_RATE = num('BENCH_CPU_DELIVERY_RATE', 5000);
const DELIVERY_SIZE = num('BENCH_CPU_DELIVERY_SIZE', 100);
const PAIRS = num('BENCH_CPU_PAIRS', 6);
const SECONDS = num('BENCH_CPU_SECONDS', 5);
const DELIVERY_SECONDS = num('BENCH_CPU_DELIVERY_SECONDS', 30);
const ONLY = new Set((process.env.BENCH_CPU_ONLY ?? 'single,array,segment,features,delivery').split(','));
const CONNECTIONS = 32;
const WARMUP_SECONDS = 3;

/**
 * The goals this bench reads its figures against, each against the same run's floor where there is
 * one: single events ≤ 1.25× the floor's CPU a request; arrays ≤ the floor's CPU a record + 8 µs;
 * delivery ≤ 40 µs a record in the worker (all its threads).
 */
const GOALS = { singleRatio: 1.25, p99AboveFloorMs: 2, arrayAboveFloorUs: 8, segmentRatio: 1.2, deliveryUs: 40 } as const;

interface Sample {
  /** Server CPU µs a record (all its threads), and of its main thread. */
  cpuUs: number;
  mainUs: number;
  p99: number;
  records: number;
  failed: number;
  /** The server's event-loop delay over the run (its /metrics), ms; NaN for the floor. */
  loopP99: number;
  loopMax: number;
}

interface Target {
  port: number;
  pid: number;
  authorization?: string;
  /** The server's /metrics text (Tributary's), to read its event-loop delay. */
  metrics?: () => Promise<string>;
}

/** µs a call of `fn` over `rounds` passes of `inputs`, best of three (this process, no server). */
function timeEach<T>(inputs: readonly T[], fn: (input: T) => unknown, rounds = 20): number {
  let best = Number.POSITIVE_INFINITY;
  for (let attempt = 0; attempt < 3; attempt++) {
    const started = performance.now();
    for (let r = 0; r < rounds; r++) for (const input of inputs) fn(input);
    best = Math.min(best, ((performance.now() - started) * 1000) / (rounds * inputs.length));
  }
  return best;
}

/**
 * The exact-integer scan (parseExactJson against JSON.parse, on the bench's single-event bodies)
 * and the traffic counts (TrafficCounter.count, whose Redis writes go out every TRAFFIC_FLUSH_MS
 * apart from any request), which no setting turns off: their CPU a request measured in this process.
 */
function inProcessFeatures(): string[] {
  const bodies = singleBodies(256, 7);
  const bare = timeEach(bodies, (b) => JSON.parse(b));
  const scanned = timeEach(bodies, (b) => parseExactJson(b));
  const counter = new TrafficCounter({ redis: undefined as unknown as RedisClient, redisPrefix: 'bench', resolver: undefined as unknown as TrackerResolver, flushMs: 3_600_000 });
  const outcomes = [['accepted', 1]] as const;
  const counted = timeEach(bodies, () => counter.count('cpu', '/v3/event', outcomes), 200);
  const row = (name: string, off: number, on: number) => `${name.padEnd(44)} ${fmt(off, 2).padStart(6)} → ${fmt(on, 2).padStart(6)} µs a request (${on >= off ? '+' : '−'}${fmt(Math.abs(on - off), 2)} µs, in process)`;
  return [row('exact-integer scan (JSON.parse → parseExactJson)', bare, scanned), row('traffic counts (TrafficCounter.count)', 0, counted)];
}

/**
 * BENCH_CPU_PROF=DIR: each server (the floors, API, worker) writes a V8 CPU profile there as it stops.
 * A V8 profile counts wall time: a socket write during which the kernel runs Redis on the same core
 * reads as the writer's. BENCH_CPU_PERF=1 runs each server with `--perf-basic-prof-only-functions`
 * instead, for Linux `perf record -g -p <pid>`, whose samples are CPU time with JavaScript's names.
 */
const profileArgs = (): string[] => [...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []), ...(process.env.BENCH_CPU_PERF ? ['--perf-basic-prof-only-functions'] : [])];

const verdict = (ok: boolean): string => (ok ? 'met' : 'not met');

async function main(): Promise<void> {
  buildChildren();
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const loader = forkChild('paced-load.ts');
  const closers: Array<() => Promise<unknown>> = [async () => (loader.send({ type: 'stop' }), stopChild(loader))];
  const prefixes: string[] = [];
  try {
    await nextMessage(loader, 'ready');
    const cpu = os.cpus();
    console.log(`# bench:cpu  ${new Date().toISOString()}  ${cpu.length} × ${cpu[0]?.model ?? '?'}, node ${process.version}`);
    console.log(`${PAIRS} alternated pairs of ${SECONDS} s runs, ${CONNECTIONS} connections, ~300-byte events; CPU from /proc of the server's process\n`);

    /** One measured run of `seconds` at `rate` requests/s against `target`. */
    const measure = async (target: Target, recordsPerRequest: number, rate: number, seconds = SECONDS, keyHeader?: string, shape: Pick<PacedPlan, 'path' | 'format' | 'authorization'> = { path: '/v3/event' }): Promise<Sample> => {
      const plan: PacedPlan = { url: `http://127.0.0.1:${target.port}`, connections: CONNECTIONS, seconds, recordsPerRequest, seed: 7, rate, ...(target.authorization ? { authorization: target.authorization } : {}), ...(keyHeader ? { keyHeader } : {}), ...shape };
      // prom-client's event-loop histogram starts again at each reading.
      await target.metrics?.();
      const cpu0 = processCpuSeconds(target.pid);
      const main0 = mainThreadCpuSeconds(target.pid);
      const { result } = await ask<Message & { result: PacedResult }>(loader, { type: 'run', plan: plan as unknown as Message[string] }, 'result', (seconds + 60) * 1000);
      const records = Math.max(1, result.ok * recordsPerRequest);
      const text = await target.metrics?.();
      const loop = (line: string) => (text === undefined ? Number.NaN : metric(text, line) * 1000);
      return {
        loopP99: loop('nodejs_eventloop_lag_p99_seconds'),
        loopMax: loop('nodejs_eventloop_lag_max_seconds'),
        cpuUs: ((processCpuSeconds(target.pid) - cpu0) * 1e6) / records,
        mainUs: ((mainThreadCpuSeconds(target.pid) - main0) * 1e6) / records,
        p99: result.p99,
        records,
        failed: result.failed,
      };
    };
    /** Pairs of runs A and B right after each other, B first in every other pair; the medians. */
    const pairs = async (label: string, runA: () => Promise<Sample>, runB: () => Promise<Sample>): Promise<{ a: Sample; b: Sample; ratio: number }> => {
      const as: Sample[] = [];
      const bs: Sample[] = [];
      const paired = await alternatePairs(PAIRS, runA, runB, (s) => ({ requestsPerSecond: s.records, cpuPerRequest: s.cpuUs }), (_round, a, b) => (as.push(a), bs.push(b)));
      const failed = [...as, ...bs].reduce((n, s) => n + s.failed, 0);
      if (failed > 0) throw new Error(`${label}: ${failed} requests failed`);
      const mid = (list: Sample[]): Sample => ({ cpuUs: median(list.map((s) => s.cpuUs)), mainUs: median(list.map((s) => s.mainUs)), p99: median(list.map((s) => s.p99)), records: median(list.map((s) => s.records)), failed: 0, loopP99: median(list.map((s) => s.loopP99)), loopMax: Math.max(...list.map((s) => s.loopMax)) });
      return { a: mid(as), b: mid(bs), ratio: paired.cpu };
    };

    /** The API (start:api) with the given trackers and settings; records stay in the ingest queue. */
    const api = async (trackers: BenchTracker[], env: Record<string, string> = {}): Promise<TributaryServer> => {
      const prefix = `bench-cpu-${randomUUID().slice(0, 8)}`;
      prefixes.push(prefix);
      const server = await startTributary({ redis, redisUrl: REDIS_URL, prefix, trackers, processes: 1, nodeArgs: profileArgs(), env });
      closers.push(() => server.stop());
      return server;
    };
    const tracker = (id: string, extra: Partial<BenchTracker> = {}): BenchTracker => ({ id, token: generateToken(), ...extra });
    const targetOf = (server: TributaryServer, t: BenchTracker): Target => ({ port: server.port, pid: server.pids[0]!, authorization: `Tracker ${t.token}`, metrics: server.metrics });

    /** The Koa floor (bench/koa-floor-server.ts), started once. */
    let koaFloor: Target | undefined;
    const startKoaFloor = async (): Promise<Target> => {
      if (koaFloor) return koaFloor;
      const floorChild = forkChild('koa-floor-server.ts', {}, profileArgs());
      closers.push(async () => (floorChild.send({ type: 'stop' }), stopChild(floorChild)));
      const { port } = await nextMessage<Message & { port: number }>(floorChild, 'listening');
      koaFloor = { port, pid: floorChild.pid! };
      return koaFloor;
    };

    if (ONLY.has('single') || ONLY.has('array')) {
      const floor = await startKoaFloor();
      const t = tracker('cpu');
      const tributary = targetOf(await api([t]), t);
      // The floor of the fixed shape (bench/koa-floor-server.ts, FLOOR_QUEUE_PREFIX): the Koa floor that
      // also puts the bodies of each millisecond's requests into one BullMQ job and answers each request
      // once its job is added, as ENQUEUE_LINGER_MS does; no token, validation or record ids. Paired
      // with the Koa floor (what the shape costs above it) and with the API (what Tributary adds to the shape).
      const queueChild = forkChild('koa-floor-server.ts', { FLOOR_REDIS_URL: REDIS_URL, FLOOR_QUEUE_PREFIX: `${prefixes[0]}:floor` }, profileArgs());
      closers.push(async () => (queueChild.send({ type: 'stop' }), stopChild(queueChild)));
      const shapeFloor: Target = { port: (await nextMessage<Message & { port: number }>(queueChild, 'listening')).port, pid: queueChild.pid! };
      if (ONLY.has('single')) {
        const run = (target: Target) => () => measure(target, 1, RATE);
        for (const target of [floor, tributary, shapeFloor]) await measure(target, 1, RATE, WARMUP_SECONDS);
        const { a, b, ratio } = await pairs('single events', run(floor), run(tributary));
        console.log(`single events at ${fmt(RATE)} requests/s`);
        console.log(`  Koa floor   ${fmt(a.cpuUs, 1)} µs of server CPU a request (${fmt(a.mainUs, 1)} on its main thread), p99 ${fmt(a.p99, 1)} ms`);
        console.log(`  API         ${fmt(b.cpuUs, 1)} µs (${fmt(b.mainUs, 1)}), p99 ${fmt(b.p99, 1)} ms; its event loop's delay p99 ${fmt(b.loopP99, 1)} ms, max ${fmt(b.loopMax, 1)} ms`);
        console.log(`  API ÷ floor ${fmt(ratio, 2)}× (median of the pairs; goal ≤ ${GOALS.singleRatio}×: ${verdict(ratio <= GOALS.singleRatio)}); p99 ${fmt(b.p99 - a.p99, 1)} ms above the floor's (goal ≤ ${GOALS.p99AboveFloorMs}: ${verdict(b.p99 - a.p99 <= GOALS.p99AboveFloorMs)})`);
        const shape = await pairs('single events, shape floor', run(floor), run(shapeFloor));
        console.log(`  shape floor (Koa floor + a BullMQ job a millisecond) ${fmt(shape.b.cpuUs, 1)} µs a request, p99 ${fmt(shape.b.p99, 1)} ms: ${fmt(shape.ratio, 2)}× the Koa floor (${fmt(shape.a.cpuUs, 1)}) in pairs of their own (no goal)`);
        const added = await pairs('single events, API over the shape floor', run(shapeFloor), run(tributary));
        console.log(`  API ÷ shape floor ${fmt(added.ratio, 2)}× (${fmt(added.b.cpuUs, 1)} ÷ ${fmt(added.a.cpuUs, 1)}, pairs of their own; no goal)\n`);
      }
      if (ONLY.has('array')) {
        const run = (target: Target) => () => measure(target, 100, ARRAY_RATE);
        for (const target of [floor, tributary, shapeFloor]) await measure(target, 100, ARRAY_RATE, WARMUP_SECONDS);
        const { a, b } = await pairs('arrays', run(floor), run(tributary));
        console.log(`arrays of 100 at ${fmt(ARRAY_RATE)} requests/s (${fmt(ARRAY_RATE * 100)} records/s)`);
        console.log(`  Koa floor   ${fmt(a.cpuUs, 2)} µs of server CPU a record (${fmt(a.mainUs, 2)} on its main thread)`);
        console.log(`  API         ${fmt(b.cpuUs, 2)} µs (${fmt(b.mainUs, 2)}), ${fmt(b.cpuUs - a.cpuUs, 2)} µs above the floor (goal ≤ ${GOALS.arrayAboveFloorUs}: ${verdict(b.cpuUs - a.cpuUs <= GOALS.arrayAboveFloorUs)})`);
        const shape = await pairs('arrays, shape floor', run(floor), run(shapeFloor));
        console.log(`  shape floor (Koa floor + a BullMQ job a millisecond) ${fmt(shape.b.cpuUs, 2)} µs a record: ${fmt(shape.b.cpuUs - shape.a.cpuUs, 2)} µs above the Koa floor (${fmt(shape.a.cpuUs, 2)}) in pairs of their own (no goal)`);
        const added = await pairs('arrays, API over the shape floor', run(shapeFloor), run(tributary));
        console.log(`  API ${fmt(added.b.cpuUs - added.a.cpuUs, 2)} µs a record above the shape floor (${fmt(added.b.cpuUs, 2)} against ${fmt(added.a.cpuUs, 2)}, pairs of their own; no goal)\n`);
      }
    }

    if (ONLY.has('segment')) {
      const t = tracker('segment');
      const server = targetOf(await api([t]), t);
      const v3 = () => measure(server, 100, ARRAY_RATE, SECONDS, undefined, { path: '/v3/event', format: 'v3-keyed' });
      const segment = () => measure(server, 100, ARRAY_RATE, SECONDS, undefined, { path: '/v1/batch', format: 'segment', authorization: `Basic ${Buffer.from(`${t.token}:`).toString('base64')}` });
      await v3();
      await segment();
      const { a, b, ratio } = await pairs('segment', v3, segment);
      console.log(`the same keyed events, 100 a request at ${fmt(ARRAY_RATE)} requests/s (${fmt(ARRAY_RATE * 100)} records/s)`);
      console.log(`  v3 arrays           ${fmt(a.cpuUs, 2)} µs of server CPU a record (${fmt(a.mainUs, 2)} on its main thread)`);
      console.log(`  Segment /v1/batch   ${fmt(b.cpuUs, 2)} µs (${fmt(b.mainUs, 2)})`);
      console.log(`  /v1 ÷ v3 ${fmt(ratio, 2)}× (median of the pairs; goal ≤ ${GOALS.segmentRatio}×: ${verdict(ratio <= GOALS.segmentRatio)})\n`);
    }

    if (ONLY.has('features')) {
      console.log(`per-request features at ${fmt(RATE)} single events/s: off, on, and what on adds (median of the pairs)`);
      const show = (name: string, r: { a: Sample; b: Sample; ratio: number }) =>
        console.log(`  ${name.padEnd(44)} ${fmt(r.a.cpuUs, 1).padStart(6)} → ${fmt(r.b.cpuUs, 1).padStart(6)} µs a request (${r.ratio >= 1 ? '+' : ''}${fmt((r.ratio - 1) * 100, 1)} %)`);
      const plain = tracker('plain');
      const withPrivacy = tracker('private', { settings: { privacyRules: [{ property: 'page', action: 'hash' }] } });
      // Request history: REQUEST_HISTORY_SIZE=0 keeps none; two servers that differ in that setting alone.
      const off = targetOf(await api([plain], { REQUEST_HISTORY_SIZE: '0' }), plain);
      const full = await api([plain, withPrivacy]);
      const on = targetOf(full, plain);
      for (const t of [off, on]) await measure(t, 1, RATE, WARMUP_SECONDS);
      show('request history (REQUEST_HISTORY_SIZE 0 → 1000)', await pairs('history', () => measure(off, 1, RATE), () => measure(on, 1, RATE)));
      const privateTarget = targetOf(full, withPrivacy);
      await measure(privateTarget, 1, RATE, WARMUP_SECONDS);
      show('a personal-data rule (hash one field)', await pairs('privacy', () => measure(on, 1, RATE), () => measure(privateTarget, 1, RATE)));
      // Keys: the same requests with a key each, under a header the server ignores and as Idempotency-Key.
      const keyed = (header: string) => () => measure(on, 1, RATE, SECONDS, header);
      show('Idempotency-Key on every request', await pairs('keys', keyed('x-bench-key'), keyed('idempotency-key')));
      // The two that cannot be switched off, timed in this process on the same bodies, off (the bare step) against on.
      for (const line of inProcessFeatures()) console.log(`  ${line}`);
      console.log('');
    }

    if (ONLY.has('delivery')) {
      // The delivery goal is absolute, and machines of one kind differ two-fold in speed: the Koa
      // floor's CPU a single-event request, measured just before, says how fast this one is.
      const floor = await startKoaFloor();
      await measure(floor, 1, RATE, WARMUP_SECONDS);
      const speed = await measure(floor, 1, RATE);
      const prefix = `bench-cpu-${randomUUID().slice(0, 8)}`;
      prefixes.push(prefix);
      const t = tracker('deliver', { destinations: [{ id: 'local', type: 'local' }] });
      const server = await startTributary({ redis, redisUrl: REDIS_URL, prefix, trackers: [t], processes: 1, nodeArgs: [], role: 'api' });
      closers.push(() => server.stop());
      const worker = spawnBenchWorker(REDIS_URL, prefix, server.dataDir, profileArgs());
      // Closed before the API, whose stop removes the data directory they share.
      closers.push(async () => {
        if (worker.exitCode === null) worker.kill('SIGTERM');
        await stopChild(worker, 30_000);
      });
      const status = deliveryKeys(prefix, { trackerId: t.id, destinationId: 'local' }).status;
      const delivered = async () => Number((await redis.hget(status, 'delivered')) ?? 0);
      const target = targetOf(server, t);
      const requestRate = DELIVERY_RATE / DELIVERY_SIZE;
      // Warm up until delivery keeps pace, then measure the worker over a steady window.
      await measure(target, DELIVERY_SIZE, requestRate, 10);
      const load = measure(target, DELIVERY_SIZE, requestRate, DELIVERY_SECONDS + 10);
      await new Promise((r) => setTimeout(r, 5000));
      const threads0 = threadCpuSeconds(worker.pid);
      const [cpu0, main0, d0, t0] = [processCpuSeconds(worker.pid), mainThreadCpuSeconds(worker.pid), await delivered(), performance.now()];
      await new Promise((r) => setTimeout(r, DELIVERY_SECONDS * 1000));
      const [cpu1, main1, d1, t1] = [processCpuSeconds(worker.pid), mainThreadCpuSeconds(worker.pid), await delivered(), performance.now()];
      const threads1 = threadCpuSeconds(worker.pid);
      if (process.env.BENCH_THREADS) {
        for (const [tid, c1] of threads1) {
          const c0 = threads0.get(tid) ?? { user: 0, system: 0 };
          const u = ((c1.user - c0.user) * 1e6) / (d1 - d0), s = ((c1.system - c0.system) * 1e6) / (d1 - d0);
          if (u + s > 0.05) console.log(`  thread +${tid - worker.pid!}: user ${fmt(u, 2)} system ${fmt(s, 2)} µs a record`);
        }
      }
      const sent = await load;
      const after = await server.idleCounts();
      await poll('every record delivered', async () => ((await delivered()) >= after.records ? true : undefined), 300_000, 200);
      const records = d1 - d0;
      const us = ((cpu1 - cpu0) * 1e6) / records;
      console.log(`delivery to the local warehouse at ${fmt(DELIVERY_RATE)} records/s offered (${DELIVERY_SIZE === 1 ? 'single events' : `arrays of ${DELIVERY_SIZE}`}; ${sent.failed} failed), worker apart, ${DELIVERY_SECONDS} s window`);
      console.log(`  worker      ${fmt(records / ((t1 - t0) / 1000))} records/s delivered, ${fmt(us, 1)} µs of CPU a record (${fmt(((main1 - main0) * 1e6) / records, 1)} on its main thread) (goal ≤ ${GOALS.deliveryUs} µs: ${verdict(us <= GOALS.deliveryUs)}); all ${fmt(after.records)} delivered`);
      console.log(`  this machine's speed: the Koa floor at ${fmt(RATE)} single events/s costs ${fmt(speed.cpuUs, 1)} µs a request, measured just before (no goal)\n`);
    }
  } finally {
    for (const close of closers.reverse()) await close().catch((err: unknown) => console.error(err));
    for (const prefix of prefixes) await deletePrefix(redis, prefix);
    redis.disconnect();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
