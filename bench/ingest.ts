import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { generateToken } from '../src/trackers/tokens';
import { ask, buildChildren, forkChild, nextMessage, stopChild, type Message } from './child';
import type { LoadPlan, LoadResult } from './load-generator';
import { machineCpuSeconds, processCpuSeconds, redisCpuSeconds } from './proc-stats';
import { countQueuedRecords, deletePrefix } from './queue-records';
import type { BenchTracker } from './tributary-server';

/**
 * `npm run bench:ingest [-- --duration 10 --warmup 3 --connections 50 --batch-size 100 --workers 1
 *  --only baseline,single,batch --cpu-prof DIR]`, or the `BENCH_*` variables below.
 *
 * In one run: a bare node:http server that parses JSON and answers 204, then Tributary's real
 * server, both loaded by autocannon in a process of its own with ~300-byte events; then arrays of
 * events. Afterwards every 2xx is checked against the records found in the BullMQ queue, and the
 * benchmark's Redis prefix is deleted. All traffic goes to 127.0.0.1. Figures: bench/RESULTS.md.
 */
const { values: args } = parseArgs({
  options: {
    duration: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
    'batch-size': { type: 'string' },
    only: { type: 'string' },
    workers: { type: 'string' },
    'cpu-prof': { type: 'string' },
  },
});

function setting(arg: string | undefined, env: string, def: number): number {
  const raw = arg ?? process.env[env];
  const n = raw === undefined ? def : Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${env} must be a non-negative number, got ${raw}`);
  return n;
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
  /** Tributary server processes sharing the port (node:cluster); server.ts runs one. Default 1. */
  workers: setting(args.workers, 'BENCH_WORKERS', 1),
  /** Comma-separated subset of baseline,single,batch. Default all three. */
  only: new Set((args.only ?? process.env.BENCH_ONLY ?? 'baseline,single,batch').split(',')),
  /** Extra node flags for the Tributary server processes, space-separated (e.g. `--max-semi-space-size=64`). Default none. */
  serverNodeArgs: (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean),
  /** Directory for a V8 CPU profile of the Tributary server (node --cpu-prof). Default none. */
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

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** A server child: the process the benchmark talks to, and every process that serves its port. */
interface Server {
  child: ChildProcess;
  port: number;
  pids: number[];
}

async function startServer(child: ChildProcess): Promise<Server> {
  const msg = await nextMessage<Message & { port: number; pids?: number[] }>(child, 'listening');
  return { child, port: msg.port, pids: msg.pids ?? [child.pid!] };
}

const serverCpuSeconds = (server: Server) => server.pids.reduce((sum, pid) => sum + processCpuSeconds(pid), 0);

async function load(loader: ChildProcess, server: Server, redis: Redis, plan: LoadPlan): Promise<RunFigures> {
  const cpu0 = [serverCpuSeconds(server), processCpuSeconds(loader.pid), await redisCpuSeconds(redis), machineCpuSeconds()] as const;
  const reply = await ask<Message & { result: LoadResult }>(loader, { type: 'run', plan: plan as unknown as Message[string] }, 'result', (plan.duration + 60) * 1000);
  const cpu1 = [serverCpuSeconds(server), processCpuSeconds(loader.pid), await redisCpuSeconds(redis), machineCpuSeconds()] as const;
  const [serverCpu, loaderCpu, redisCpu, machineCpu] = cpu1.map((v, i) => v - cpu0[i]!) as [number, number, number, number];
  return { ...reply.result, serverCpu, loaderCpu, redisCpu, otherCpu: Math.max(0, machineCpu - serverCpu - loaderCpu - redisCpu) };
}

function report(label: string, r: RunFigures, recordsPerRequest: number): void {
  const perSecond = recordsPerRequest === 1 ? `${fmt(r.requestsPerSecond)} req/s` : `${fmt(r.requestsPerSecond)} req/s = ${fmt(r.requestsPerSecond * recordsPerRequest)} records/s`;
  // Other processes taking more than a fifth of a core skew every figure of the run: say so.
  const busy = r.otherCpu / r.duration > 0.2 ? `  ⚠ other processes used ${fmt(r.otherCpu / r.duration, 1)} cores` : '';
  const failures = r.non2xx + r.errors + r.timeouts > 0 ? `  non-2xx ${r.non2xx} ${JSON.stringify(r.statusCodes)} errors ${r.errors} timeouts ${r.timeouts}` : '';
  console.log(
    `${label.padEnd(28)} ${perSecond.padEnd(34)} p50 ${fmt(r.p50)} ms  p90 ${fmt(r.p90)} ms  p99 ${fmt(r.p99)} ms  max ${fmt(r.max)} ms` +
      `  | cpu s: server ${fmt(r.serverCpu, 1)} (${fmt((r.serverCpu * 1e6) / Math.max(r.responses, 1))} µs/req) load ${fmt(r.loaderCpu, 1)} redis ${fmt(r.redisCpu, 1)} other ${fmt(r.otherCpu, 1)}${failures}${busy}`,
  );
}

async function waitIdle(server: ChildProcess): Promise<Record<string, number>> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const stats = await ask<Message & { active: number; accepted: Record<string, number> }>(server, { type: 'stats' }, 'stats');
    if (stats.active === 0) return stats.accepted;
    if (Date.now() > deadline) throw new Error(`the server still has ${stats.active} requests under way`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function main(): Promise<void> {
  const redis = new Redis(settings.redisUrl, { maxRetriesPerRequest: 1 });
  const children: ChildProcess[] = [];
  const prefix = `bench-${randomUUID().slice(0, 8)}`;
  const spawn = (file: string, env?: Record<string, string>, nodeArgs?: string[]) => {
    const child = forkChild(file, env, nodeArgs);
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
        `~300-byte events, arrays of ${settings.batchSize}; ${settings.workers} Tributary process${settings.workers > 1 ? 'es' : ''}${settings.serverNodeArgs.length ? ` (node ${settings.serverNodeArgs.join(' ')})` : ''}; server env ENQUEUE_MAX_INFLIGHT=${process.env.ENQUEUE_MAX_INFLIGHT ?? '(default)'} ENQUEUE_MAX_BATCH_RECORDS=${process.env.ENQUEUE_MAX_BATCH_RECORDS ?? '(default)'}`,
    );
    console.log('');

    buildChildren();
    const loader = spawn('load-generator.ts');
    await nextMessage(loader, 'ready');
    const plan = (port: number, path: string, recordsPerRequest: number, duration: number, authorization?: string, seed = 1): LoadPlan => ({
      url: `http://127.0.0.1:${port}`,
      path,
      connections: settings.connections,
      duration,
      recordsPerRequest,
      seed,
      ...(authorization ? { authorization } : {}),
    });

    let baseline: RunFigures | undefined;
    if (settings.only.has('baseline')) {
      const server = await startServer(spawn('baseline-server.ts'));
      if (settings.warmup > 0) await load(loader, server, redis, plan(server.port, '/', 1, settings.warmup, undefined, 99));
      baseline = await load(loader, server, redis, plan(server.port, '/', 1, settings.duration));
      report('baseline node:http (204)', baseline, 1);
      server.child.send({ type: 'stop' });
      await stopChild(server.child);
    }

    if (!settings.only.has('single') && !settings.only.has('batch')) return;
    const trackers: BenchTracker[] = ['warmup', 'single', 'batch'].map((id) => ({ id: `bench-${id}`, token: generateToken() }));
    const [warm, single, batch] = trackers as [BenchTracker, BenchTracker, BenchTracker];
    const auth = (t: BenchTracker) => `Tracker ${t.token}`;
    const nodeArgs = [...settings.serverNodeArgs, ...(settings.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${settings.cpuProfDir}`] : [])];
    const server = await startServer(
      spawn('tributary-server.ts', { BENCH_PREFIX: prefix, BENCH_REDIS_URL: settings.redisUrl, BENCH_TRACKERS: JSON.stringify(trackers), BENCH_WORKERS: String(settings.workers) }, nodeArgs),
    );
    const { port } = server;
    const label = settings.workers > 1 ? `tributary ×${settings.workers}` : 'tributary';

    const runs: Array<{ tracker: BenchTracker; recordsPerRequest: number; result: RunFigures }> = [];
    if (settings.only.has('single')) {
      if (settings.warmup > 0) await load(loader, server, redis, plan(port, '/v3/event', 1, settings.warmup, auth(warm), 99));
      const result = await load(loader, server, redis, plan(port, '/v3/event', 1, settings.duration, auth(single)));
      report(`${label} POST /v3/event`, result, 1);
      runs.push({ tracker: single, recordsPerRequest: 1, result });
      if (baseline) {
        const ratio = result.requestsPerSecond / baseline.requestsPerSecond;
        console.log(`ratio tributary/baseline: ${fmt(ratio, 3)}×   (target ≥ 0.50×: ${ratio >= 0.5 ? 'met' : 'NOT met'}; p99 ${fmt(result.p99)} ms, target ≤ 15 ms: ${result.p99 <= 15 ? 'met' : 'NOT met'})`);
      }
    }
    if (settings.only.has('batch')) {
      if (settings.warmup > 0) await load(loader, server, redis, plan(port, '/v3/event', settings.batchSize, settings.warmup, auth(warm), 99));
      const result = await load(loader, server, redis, plan(port, '/v3/event', settings.batchSize, settings.duration, auth(batch)));
      report(`${label} arrays of ${settings.batchSize}`, result, settings.batchSize);
      runs.push({ tracker: batch, recordsPerRequest: settings.batchSize, result });
    }

    const answered = await waitIdle(server.child);
    server.child.send({ type: 'stop' });
    await stopChild(server.child);
    loader.send({ type: 'stop' });

    console.log('');
    const queued = await countQueuedRecords(redis, prefix);
    for (const { tracker, recordsPerRequest, result } of runs) {
      const stored = queued.records.get(tracker.id) ?? 0;
      const jobs = queued.jobsByTracker.get(tracker.id) ?? 0;
      const serverOk = answered[tracker.id] ?? 0;
      const cut = serverOk - result.total2xx;
      // autocannon drops its sockets when the time is up: answers still on the way are stored but never read.
      const pass = stored === serverOk * recordsPerRequest && cut >= 0 && cut <= settings.connections && result.non2xx === 0;
      ok &&= pass;
      console.log(
        `durability ${tracker.id}: ${fmt(serverOk)} 2xx answered × ${recordsPerRequest} = ${fmt(serverOk * recordsPerRequest)} records; ` +
          `${fmt(stored)} records in the BullMQ ingest queue → ${pass ? 'OK' : 'MISMATCH'}` +
          ` (clients read ${fmt(result.total2xx)} of those 2xx; ${cut} were in flight when the load stopped; ${fmt(jobs)} jobs, ${fmt(stored / Math.max(jobs, 1), 1)} records per job)`,
      );
    }
  } catch (err) {
    ok = false;
    console.error(err);
  } finally {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await Promise.all(children.map((c) => stopChild(c, 5_000)));
    const deleted = await deletePrefix(redis, prefix).catch(() => -1);
    console.log(`cleanup: ${deleted >= 0 ? `${deleted} keys deleted under ${prefix}:` : `could not delete ${prefix}:*`}`);
    redis.disconnect();
  }
  process.exitCode = ok ? 0 : 1;
}

void main();
