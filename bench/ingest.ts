import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { generateToken } from '../src/core/trackers/tokens';
import { BUCKET_HOURS, bucketStartHour, MEMBER_BYTES, seenBucketKey } from '../src/ingest/dedup';
import { ask, buildChildren, forkChild, nextMessage, stopChild, type Message } from './child';
import type { LoadPlan, LoadResult } from './load-generator';
import { alternatePairs, type PairedRatio } from './pairs';
import { machineCpuSeconds, processCpuSeconds, redisCpuSeconds } from './proc-stats';
import { countQueuedRecords, deletePrefix } from './queue-records';
import { startTributary, type BenchTracker, type ServerCounts } from './tributary-server';
import { fmt } from './format';

/**
 * `npm run bench:ingest [-- --duration 10 --warmup 3 --connections 50 --batch-size 100
 *  --processes 1,2 --only baseline,floor,single,keyed,batch --pairs 10 --pair-seconds 2 --cpu-prof DIR]`, or the `BENCH_*` variables below.
 *
 * In one run: a bare node:http server that parses JSON and answers 204; the floor of the fixed
 * shape (Koa and @koa/router answering the contract's 202, doing nothing else); then Tributary's real
 * server (`src/boot/server.ts api`) once per API_PROCESSES value, each loaded by autocannon in a
 * process of its own with ~300-byte events, then in pairs of short runs side by side with the
 * floor, whose order alternates (`--pairs`, default 10, of `--pair-seconds`, default 2: on a VM
 * whose speed drifts by a fifth over tens of seconds, runs one after the other measure the drift);
 * then, in pairs of the same kind, the same requests each with a
 * key of its own, once under a header the server ignores and once as `Idempotency-Key`
 * (deduplicated, with the 24 earlier hours of the window holding markers, so that each write looks
 * into all of their sets as a day-old tracker's does): the median ratio of the pairs is the cost
 * of keys, and Redis bytes per remembered key are read after; then arrays of events. The floor is
 * loaded with single events and with arrays, and Tributary's ratios
 * to it are printed beside the goals. (autocannon's fixed-rate mode sends each connection's share
 * in bursts, which puts even the floor's p99 above 100 ms: latency is read at saturation, where the
 * floor's own p99 says what the machine allows.) Afterwards every 2xx is
 * checked against the records found in the BullMQ queue, and the benchmark's Redis prefix is
 * deleted. All traffic goes to 127.0.0.1. Figures: bench/RESULTS.md.
 */
const { values: args } = parseArgs({
  options: {
    duration: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
    'batch-size': { type: 'string' },
    processes: { type: 'string' },
    only: { type: 'string' },
    'cpu-prof': { type: 'string' },
    pairs: { type: 'string' },
    'pair-seconds': { type: 'string' },
  },
});

function setting(arg: string | undefined, env: string, def: number): number {
  const raw = arg ?? process.env[env];
  const n = raw === undefined ? def : Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${env} must be a non-negative number, got ${raw}`);
  return n;
}

function processCounts(raw: string): number[] {
  const counts = raw.split(',').map((s) => Number(s.trim()));
  if (counts.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`BENCH_PROCESSES must list whole numbers ≥ 1, got ${raw}`);
  return counts;
}

const settings = {
  /** Seconds of each measured run. Default 10. */
  duration: setting(args.duration, 'BENCH_DURATION', 10),
  /** Seconds of unmeasured load before each measured run (JIT, connection setup). Default 3. */
  warmup: setting(args.warmup, 'BENCH_WARMUP', 3),
  /** Concurrent keep-alive connections. Default 50. */
  connections: setting(args.connections, 'BENCH_CONNECTIONS', 50),
  /** Records per request in the array run. Default 100. */
  batchSize: setting(args['batch-size'], 'BENCH_BATCH_SIZE', 100),
  /** The API_PROCESSES values to measure, one server each, in order. Default 1,2. */
  processes: processCounts(args.processes ?? process.env.BENCH_PROCESSES ?? '1,2'),
  /** Comma-separated subset of baseline,floor,single,keyed,batch. Default all five. */
  only: new Set((args.only ?? process.env.BENCH_ONLY ?? 'baseline,floor,single,keyed,batch').split(',')),
  /** Extra node flags for the Tributary server processes, space-separated (e.g. `--max-semi-space-size=64`). Default none. */
  serverNodeArgs: (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean),
  /**
   * Pairs of short runs side by side, order alternating, whose median ratio is read: Tributary and
   * the Koa floor (single events), and the control and keyed runs. Default 10.
   */
  pairs: setting(args.pairs, 'BENCH_PAIRS', 10),
  /** Seconds of each run of those pairs (only the first pair is warmed up). Default 2. */
  pairSeconds: setting(args['pair-seconds'], 'BENCH_PAIR_SECONDS', 2),
  /** Directory for V8 CPU profiles of the Tributary processes (node --cpu-prof). Default none. */
  cpuProfDir: args['cpu-prof'] ?? process.env.BENCH_CPU_PROF,
  redisUrl: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
};

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);
if (!LOOPBACK.has(new URL(settings.redisUrl).hostname)) throw new Error('BENCH_REDIS_URL must point at this machine (127.0.0.1).');

interface RunFigures extends LoadResult {
  serverCpu: number;
  loaderCpu: number;
  redisCpu: number;
  /** CPU seconds used during the run by processes other than server, load generator and Redis. */
  otherCpu: number;
}

/** One measured run against Tributary, with what the server counted during it. */
interface TributaryRun {
  processes: number;
  tracker: BenchTracker;
  recordsPerRequest: number;
  /** The header that carried a key of each request's own: `idempotency-key`, the control's name, or none. */
  keyHeader: string | undefined;
  result: RunFigures;
  server: ServerCounts;
  /** Measured runs summed into this one. */
  rounds?: number;
}

const busyCores = (r: RunFigures) => r.otherCpu / r.duration;
const cpuPerRequest = (r: RunFigures) => r.serverCpu / Math.max(r.responses, 1);
/** The header of the control runs: each request carries a key of its own that the server ignores. */
const CONTROL_KEY_HEADER = 'x-bench-key';

async function load(loader: ChildProcess, serverPids: number[], redis: Redis, plan: LoadPlan): Promise<RunFigures> {
  const serverCpuSeconds = () => serverPids.reduce((sum, pid) => sum + processCpuSeconds(pid), 0);
  const cpu0 = [serverCpuSeconds(), processCpuSeconds(loader.pid), await redisCpuSeconds(redis), machineCpuSeconds()] as const;
  const reply = await ask<Message & { result: LoadResult }>(loader, { type: 'run', plan: plan as unknown as Message[string] }, 'result', (plan.duration + 60) * 1000);
  const cpu1 = [serverCpuSeconds(), processCpuSeconds(loader.pid), await redisCpuSeconds(redis), machineCpuSeconds()] as const;
  const [serverCpu, loaderCpu, redisCpu, machineCpu] = cpu1.map((v, i) => v - cpu0[i]!) as [number, number, number, number];
  return { ...reply.result, serverCpu, loaderCpu, redisCpu, otherCpu: Math.max(0, machineCpu - serverCpu - loaderCpu - redisCpu) };
}

function report(label: string, r: RunFigures, recordsPerRequest: number): void {
  const perSecond = recordsPerRequest === 1 ? `${fmt(r.requestsPerSecond)} req/s` : `${fmt(r.requestsPerSecond)} req/s = ${fmt(r.requestsPerSecond * recordsPerRequest)} records/s`;
  // Other processes taking more than a fifth of a core skew every figure of the run: say so.
  const busy = busyCores(r) > 0.2 ? `  ⚠ other processes used ${fmt(busyCores(r), 1)} cores` : '';
  const failures = r.non2xx + r.errors + r.timeouts > 0 ? `  non-2xx ${r.non2xx} ${JSON.stringify(r.statusCodes)} errors ${r.errors} timeouts ${r.timeouts}` : '';
  console.log(
    `${label.padEnd(30)} ${perSecond.padEnd(34)} p50 ${fmt(r.p50)} ms  p90 ${fmt(r.p90)} ms  p99 ${fmt(r.p99)} ms  max ${fmt(r.max)} ms` +
      `  | cpu s: server ${fmt(r.serverCpu, 1)} (${fmt((r.serverCpu * 1e6) / Math.max(r.responses, 1))} µs/req) load ${fmt(r.loaderCpu, 1)} redis ${fmt(r.redisCpu, 1)} other ${fmt(r.otherCpu, 1)}${failures}${busy}`,
  );
}

/** Markers put in each earlier set of the keyed tracker's window before its runs. */
const EARLIER_MARKERS = 4000;

/**
 * Fills the 24 hours of a keyed tracker's window before the current set with markers, as a tracker
 * that has taken keyed traffic for a day has them: each keyed write then looks into every one of
 * those sets, which a fresh tracker's writes would skip.
 */
async function fillEarlierHours(redis: Redis, prefix: string, trackerId: string): Promise<void> {
  const current = bucketStartHour(Date.now());
  for (let h = current - 24; h < current; h += BUCKET_HOURS) {
    const key = seenBucketKey(prefix, trackerId, h);
    await redis.sadd(key, ...Array.from({ length: EARLIER_MARKERS }, () => randomBytes(MEMBER_BYTES)));
    await redis.pexpire(key, 3_600_000);
  }
}

/** Keys remembered for a tracker's deduplication in the current set, and the Redis memory of that set. */
async function rememberedKeyBytes(redis: Redis, prefix: string, trackerId: string): Promise<{ keys: number; sets: number; bytes: number }> {
  const sets = await redis.keys(seenBucketKey(prefix, trackerId, bucketStartHour(Date.now())));
  let keys = 0;
  let bytes = 0;
  for (const set of sets) {
    keys += await redis.scard(set);
    bytes += Number(await redis.memory('USAGE', set, 'SAMPLES', 0));
  }
  return { keys, sets: sets.length, bytes };
}

/** Single records: at least this share of the Koa floor's requests a second. */
const FLOOR_RATIO_GOAL = 0.8;
/** Single records: p99 at most this many ms. */
const P99_GOAL_MS = 5;
/** Arrays: at least this many records a second with the API alone. */
const ARRAY_RECORDS_GOAL = 150_000;

const met = (ok: boolean) => (ok ? 'met' : 'NOT met');

/** `floorP99`: the floor's own p99 at saturation, what the machine allows any server. */
function floorVerdict(ratio: number, p99: number, floorP99?: number): string {
  const floors = floorP99 === undefined ? '' : `; the floor's own ${fmt(floorP99)} ms`;
  return `(goal ≥ ${FLOOR_RATIO_GOAL}×: ${met(ratio >= FLOOR_RATIO_GOAL)}; p99 ${fmt(p99)} ms, goal ≤ ${P99_GOAL_MS} ms: ${met(p99 <= P99_GOAL_MS)}${floors})`;
}

/** `settings.pairs` pairs of Tributary runs (see bench/pairs.ts), each pair described on a line. */
function pairsOfRuns(runA: (round: number) => Promise<RunFigures>, runB: (round: number) => Promise<RunFigures>, describe: (round: number, a: RunFigures, b: RunFigures) => string): Promise<PairedRatio> {
  return alternatePairs(settings.pairs, runA, runB, (r) => ({ requestsPerSecond: r.requestsPerSecond, cpuPerRequest: cpuPerRequest(r) }), (round, a, b) => console.log(`${''.padEnd(30)} ${describe(round, a, b)}`));
}

async function main(): Promise<void> {
  const redis = new Redis(settings.redisUrl, { maxRetriesPerRequest: 1 });
  const children: ChildProcess[] = [];
  const stops: Array<() => Promise<unknown>> = [];
  const prefix = `bench-${randomUUID().slice(0, 8)}`;
  const spawn = (file: string, env?: Record<string, string>) => {
    const child = forkChild(file, env);
    children.push(child);
    return child;
  };
  let ok = true;
  try {
    const redisVersion = /redis_version:(\S+)/.exec(await redis.info('server'))?.[1] ?? '?';
    const cpu = os.cpus();
    console.log(`# bench:ingest  ${new Date().toISOString()}`);
    console.log(`machine: ${cpu.length} × ${cpu[0]?.model ?? '?'}, ${fmt(os.totalmem() / 2 ** 30, 1)} GiB, ${os.platform()} ${os.release()}; node ${process.version}; redis ${redisVersion} (same machine)`);
    console.log(
      `settings: ${settings.connections} connections, ${settings.duration} s measured after ${settings.warmup} s warmup, ` +
        `~300-byte events, arrays of ${settings.batchSize}; API_PROCESSES ${settings.processes.join(', ')}${settings.serverNodeArgs.length ? ` (node ${settings.serverNodeArgs.join(' ')})` : ''}; server env ENQUEUE_MAX_INFLIGHT=${process.env.ENQUEUE_MAX_INFLIGHT ?? '(default)'} ENQUEUE_MAX_BATCH_RECORDS=${process.env.ENQUEUE_MAX_BATCH_RECORDS ?? '(default)'}`,
    );
    console.log('');

    buildChildren();
    const loader = spawn('load-generator.ts');
    await nextMessage(loader, 'ready');
    /** `keyedRequests`: give each request a key of its own, from that many built before the run. */
    const plan = (port: number, path: string, recordsPerRequest: number, duration: number, authorization?: string, seed = 1, keyed?: { requests: number; header: string }): LoadPlan => ({
      url: `http://127.0.0.1:${port}`,
      path,
      connections: settings.connections,
      duration,
      recordsPerRequest,
      seed,
      ...(keyed ? { keyed: true, keyedRequests: keyed.requests, keyHeader: keyed.header } : {}),
      ...(authorization ? { authorization } : {}),
    });

    let baseline: RunFigures | undefined;
    if (settings.only.has('baseline')) {
      const server = spawn('baseline-server.ts');
      const { port } = await nextMessage<Message & { port: number }>(server, 'listening');
      if (settings.warmup > 0) await load(loader, [server.pid!], redis, plan(port, '/', 1, settings.warmup, undefined, 99));
      baseline = await load(loader, [server.pid!], redis, plan(port, '/', 1, settings.duration));
      report('baseline node:http (204)', baseline, 1);
      server.send({ type: 'stop' });
      await stopChild(server);
    }

    let floor: RunFigures | undefined;
    let floorBatch: RunFigures | undefined;
    /** The floor's server, kept for the pairs side by side with Tributary. */
    let floorServer: { port: number; pid: number; child: ChildProcess } | undefined;
    if (settings.only.has('floor')) {
      const server = spawn('koa-floor-server.ts');
      const { port } = await nextMessage<Message & { port: number }>(server, 'listening');
      floorServer = { port, pid: server.pid!, child: server };
      if (settings.warmup > 0) await load(loader, [server.pid!], redis, plan(port, '/v3/event', 1, settings.warmup, undefined, 99));
      floor = await load(loader, [server.pid!], redis, plan(port, '/v3/event', 1, settings.duration));
      report('floor: Koa + router, 202 only', floor, 1);
      if (baseline) console.log(`${''.padEnd(30)} ratio to the baseline: ${fmt(floor.requestsPerSecond / baseline.requestsPerSecond, 3)}×   (the most any Koa server answering the contract can reach here)`);
      if (settings.only.has('batch')) {
        floorBatch = await load(loader, [server.pid!], redis, plan(port, '/v3/event', settings.batchSize, settings.duration));
        report(`floor: arrays of ${settings.batchSize}`, floorBatch, settings.batchSize);
      }
    }

    const runs: TributaryRun[] = [];
    const keyCost = new Map<number, PairedRatio>();
    const floorPairs = new Map<number, PairedRatio>();
    if (settings.only.has('single') || settings.only.has('keyed') || settings.only.has('batch')) {
      for (const processes of settings.processes) {
        const trackers: BenchTracker[] = ['warmup', 'single', 'control', 'keyed', 'batch'].map((id) => ({ id: `bench-x${processes}-${id}`, token: generateToken() }));
        const [warm, single, control, keyed, batch] = trackers as [BenchTracker, BenchTracker, BenchTracker, BenchTracker, BenchTracker];
        const auth = (t: BenchTracker) => `Tracker ${t.token}`;
        const nodeArgs = [...settings.serverNodeArgs, ...(settings.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${settings.cpuProfDir}`] : [])];
        const server = await startTributary({ redis, redisUrl: settings.redisUrl, prefix, trackers, processes, nodeArgs });
        stops.push(server.stop);
        const label = `tributary API_PROCESSES=${processes}`;
        /** Keyed requests to build for a run of `seconds`: half as many again as the plain run sent, or 40 000 a second without one. */
        const keyedRequestsFor = (seconds: number): number => Math.ceil((runs.find((r) => r.processes === processes && !r.keyHeader && r.recordsPerRequest === 1)?.result.requestsPerSecond ?? 40_000) * seconds * 1.5);
        const keyedPlan = (seconds: number, header: string | undefined) => (header ? { requests: keyedRequestsFor(seconds), header } : undefined);
        const measure = async (tracker: BenchTracker, recordsPerRequest: number, name: string, keyHeader?: string, pair?: { seconds: number; warm: boolean }): Promise<RunFigures> => {
          const warmup = pair && !pair.warm ? 0 : settings.warmup;
          const duration = pair?.seconds ?? settings.duration;
          if (warmup > 0) await load(loader, server.pids, redis, plan(server.port, '/v3/event', recordsPerRequest, warmup, auth(warm), 99, keyedPlan(warmup, keyHeader)));
          const before = await server.idleCounts();
          const result = await load(loader, server.pids, redis, plan(server.port, '/v3/event', recordsPerRequest, duration, auth(tracker), 1, keyedPlan(duration, keyHeader)));
          const after = await server.idleCounts();
          report(`${label} ${name}`, result, recordsPerRequest);
          runs.push({ processes, tracker, recordsPerRequest, keyHeader, result, server: { answered: after.answered - before.answered, records: after.records - before.records } });
          if (recordsPerRequest === 1 && !keyHeader && !pair) {
            if (baseline) console.log(`${''.padEnd(30)} ratio to the baseline: ${fmt(result.requestsPerSecond / baseline.requestsPerSecond, 3)}×`);
            if (floor) {
              const ratio = result.requestsPerSecond / floor.requestsPerSecond;
              console.log(`${''.padEnd(30)} ratio to the Koa floor: ${fmt(ratio, 3)}× in req/s, ${fmt(cpuPerRequest(result) / cpuPerRequest(floor), 2)}× its server CPU a request   ${floorVerdict(ratio, result.p99, floor.p99)}`);
            }
          }
          if (recordsPerRequest > 1) {
            const records = result.requestsPerSecond * recordsPerRequest;
            console.log(`${''.padEnd(30)} ${fmt(records)} records/s, goal ≥ ${fmt(ARRAY_RECORDS_GOAL)}: ${met(records >= ARRAY_RECORDS_GOAL)}${floorBatch ? `; ${fmt(result.requestsPerSecond / floorBatch.requestsPerSecond, 3)}× the floor's arrays (${fmt(floorBatch.requestsPerSecond * recordsPerRequest)} records/s)` : ''}`);
          }
          return result;
        };
        if (settings.only.has('single')) {
          const alone = await measure(single, 1, 'POST /v3/event');
          if (floorServer) {
            const { port, pid } = floorServer;
            const runFloor = () => load(loader, [pid], redis, plan(port, '/v3/event', 1, settings.pairSeconds));
            const paired = await pairsOfRuns(
              () => runFloor(),
              (round) => measure(single, 1, `POST /v3/event #${round}`, undefined, { seconds: settings.pairSeconds, warm: false }),
              (round, floorRun, ours) => `side by side with the floor #${round}: ${fmt(ours.requestsPerSecond / floorRun.requestsPerSecond, 3)}× its req/s (floor ${fmt(floorRun.requestsPerSecond)}), ${fmt(cpuPerRequest(ours) / cpuPerRequest(floorRun), 2)}× its CPU a request`,
            );
            floorPairs.set(processes, paired);
            console.log(`${''.padEnd(30)} side by side with the Koa floor, median of ${paired.rounds} pairs: ${fmt(paired.requests, 3)}× its req/s, ${fmt(paired.cpu, 2)}× its server CPU a request   ${floorVerdict(paired.requests, alone.p99, floor?.p99)}`);
          }
        }
        if (settings.only.has('keyed')) {
          // The cost of keys, read from pairs that differ only in the header's name: the load
          // generator builds and sends the same requests, the server deduplicates one of them.
          // Short runs side by side, the order alternating, and the median of the pairs keep a
          // drift of the machine (a fifth over tens of seconds on some VMs) out of the ratio.
          await fillEarlierHours(redis, prefix, keyed.id);
          const paired = await pairsOfRuns(
            (round) => measure(control, 1, `POST, ${CONTROL_KEY_HEADER} #${round}`, CONTROL_KEY_HEADER, { seconds: settings.pairSeconds, warm: round === 1 }),
            (round) => measure(keyed, 1, `POST, Idempotency-Key #${round}`, 'idempotency-key', { seconds: settings.pairSeconds, warm: round === 1 }),
            (round, without, withKeys) => `round ${round}: ${fmt(withKeys.requestsPerSecond / without.requestsPerSecond, 3)}× the req/s, ${fmt(cpuPerRequest(withKeys) / cpuPerRequest(without), 3)}× the server CPU a request of the same requests with the key ignored`,
          );
          keyCost.set(processes, paired);
          console.log(
            `${''.padEnd(30)} cost of keys, median of ${paired.rounds}: ${fmt(paired.requests, 3)}× the req/s, ${fmt(paired.cpu, 3)}× the server CPU a request ` +
              `(cost goal ≤ 10 %: ${met(paired.requests >= 0.9 && paired.cpu <= 1.1)})`,
          );
          const memory = await rememberedKeyBytes(redis, prefix, keyed.id);
          console.log(`${''.padEnd(30)} remembered keys in the current set: ${fmt(memory.keys)}, ${fmt(memory.bytes / Math.max(memory.keys, 1), 1)} bytes per key (MEMORY USAGE; goal ≤ 64)`);
        }
        if (settings.only.has('batch')) await measure(batch, settings.batchSize, `arrays of ${settings.batchSize}`);
        stops.pop();
        const code = await server.stop();
        if (code !== 0) {
          ok = false;
          console.log(`${label}: SIGTERM → exit code ${code}, expected 0`);
        }
      }
    }
    if (floorServer) {
      floorServer.child.send({ type: 'stop' });
      await stopChild(floorServer.child);
    }
    loader.send({ type: 'stop' });
    if (runs.length === 0) return;

    console.log('');
    const queued = await countQueuedRecords(redis, prefix);
    // A tracker loaded in several runs (the keyed rounds) is checked once, over all of them.
    const byTracker = new Map<string, TributaryRun>();
    for (const run of runs) {
      const seen = byTracker.get(run.tracker.id);
      byTracker.set(
        run.tracker.id,
        seen
          ? {
              ...seen,
              result: { ...seen.result, total2xx: seen.result.total2xx + run.result.total2xx, non2xx: seen.result.non2xx + run.result.non2xx },
              server: { answered: seen.server.answered + run.server.answered, records: seen.server.records + run.server.records },
              rounds: (seen.rounds ?? 1) + 1,
            }
          : { ...run, rounds: 1 },
      );
    }
    for (const { tracker, recordsPerRequest, result, server, rounds } of byTracker.values()) {
      const stored = queued.records.get(tracker.id) ?? 0;
      const jobs = queued.jobsByTracker.get(tracker.id) ?? 0;
      const cut = server.answered - result.total2xx;
      // autocannon drops its sockets when the time is up: answers still on the way are stored but never read.
      const pass = stored === server.answered * recordsPerRequest && stored === server.records && cut >= 0 && cut <= settings.connections * (rounds ?? 1) && result.non2xx === 0;
      ok &&= pass;
      console.log(
        `durability ${tracker.id}${(rounds ?? 1) > 1 ? ` (${rounds} runs)` : ''}: ${fmt(server.answered)} 2xx answered × ${recordsPerRequest} = ${fmt(server.answered * recordsPerRequest)} records ` +
          `(the server counted ${fmt(server.records)} stored); ${fmt(stored)} records in the BullMQ ingest queue → ${pass ? 'OK' : 'MISMATCH'}` +
          ` (clients read ${fmt(result.total2xx)} of those 2xx; ${cut} were in flight when the load stopped; ${fmt(jobs)} jobs, ${fmt(stored / Math.max(jobs, 1), 1)} records per job)`,
      );
    }

    console.log('');
    console.log(`summary${baseline ? ` (baseline ${fmt(baseline.requestsPerSecond)} req/s, p99 ${fmt(baseline.p99)} ms)` : ''}:`);
    if (floor) console.log(`  floor (Koa + router, 202, no work): ${fmt(floor.requestsPerSecond)} req/s, p99 ${fmt(floor.p99)} ms${baseline ? `, ratio ${fmt(floor.requestsPerSecond / baseline.requestsPerSecond, 3)}×` : ''}${floorBatch ? `; arrays of ${settings.batchSize}: ${fmt(floorBatch.requestsPerSecond * settings.batchSize)} records/s` : ''}`);
    for (const processes of settings.processes) {
      const single = runs.find((r) => r.processes === processes && r.recordsPerRequest === 1 && !r.keyHeader)?.result;
      const withKeys = keyCost.get(processes);
      const batch = runs.find((r) => r.processes === processes && r.recordsPerRequest > 1)?.result;
      const parts: string[] = [];
      if (single) {
        parts.push(`${fmt(single.requestsPerSecond)} req/s, p50 ${fmt(single.p50)} / p99 ${fmt(single.p99)} ms`);
        if (baseline) parts.push(`${fmt(single.requestsPerSecond / baseline.requestsPerSecond, 3)}× the baseline`);
        const paired = floorPairs.get(processes);
        if (paired) parts.push(`side by side ${fmt(paired.requests, 3)}× the Koa floor's req/s and ${fmt(paired.cpu, 2)}× its CPU a request (median of ${paired.rounds}) ${floorVerdict(paired.requests, single.p99, floor?.p99)}`);
        else if (floor) parts.push(`${fmt(single.requestsPerSecond / floor.requestsPerSecond, 3)}× the Koa floor ${floorVerdict(single.requestsPerSecond / floor.requestsPerSecond, single.p99, floor.p99)}`);
      }
      if (withKeys) parts.push(`with Idempotency-Key ${fmt(withKeys.requests, 3)}× the req/s and ${fmt(withKeys.cpu, 3)}× the server CPU a request of without (median of ${withKeys.rounds})`);
      if (batch) parts.push(`arrays of ${settings.batchSize}: ${fmt(batch.requestsPerSecond * settings.batchSize)} records/s${floorBatch ? ` (${fmt(batch.requestsPerSecond / floorBatch.requestsPerSecond, 3)}× the floor's)` : ''}`);
      const busiest = Math.max(...[baseline, single, batch].filter((r): r is RunFigures => r !== undefined).map(busyCores));
      parts.push(`other processes ≤ ${fmt(busiest, 2)} cores${busiest > 0.2 ? ' ⚠ busy: compare with care' : ''}`);
      console.log(`  API_PROCESSES=${processes}: ${parts.join('; ')}`);
    }
  } catch (err) {
    ok = false;
    console.error(err);
  } finally {
    for (const stop of stops) await stop().catch(() => undefined);
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await Promise.all(children.map((c) => stopChild(c, 5_000)));
    const deleted = await deletePrefix(redis, prefix).catch(() => -1);
    console.log(`cleanup: ${deleted >= 0 ? `${deleted} keys deleted under ${prefix}:` : `could not delete ${prefix}:*`}`);
    redis.disconnect();
  }
  process.exitCode = ok ? 0 : 1;
}

void main();
