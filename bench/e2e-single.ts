import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { deliveryKeys } from '../jobs/delivery/keys';
import { generateToken } from '../src/core/trackers/tokens';
import { ask, buildChildren, forkChild, nextMessage, stopChild, type Message } from './child';
import type { LoadPlan, LoadResult } from './load-generator';
import { machineCpuSeconds, mainThreadCpuSeconds, processCpuSeconds } from './proc-stats';
import { deletePrefix } from './queue-records';
import { poll, startTributary } from './tributary-server';
import { fmt, percentile } from './format';
import { median } from './pairs';

/**
 * Single events, the way item 2 of the performance goals reads: the API alone (`npm run start:api`)
 * and `npm start` (the API and the delivery to the local warehouse in one process) at saturation,
 * in alternated pairs, then `npm start` paced at `share` of the API-alone figure. For each `npm start` run: when the
 * last record was in the warehouse, and the delivery lag p50 and p99.
 *
 * Lag comes from counters sampled every 100 ms, not from the client: records accepted (the server's
 * /metrics) and records delivered (the destination's status in Redis). The k-th record's lag is when
 * the delivered count passed k minus when the accepted count did, both interpolated between
 * samples (delivery is FIFO per destination). Its resolution is about a sample.
 */
export interface SingleEventsOptions {
  redis: Redis;
  redisUrl: string;
  /** Seconds of each measured run (after a warmup of 3 s). */
  seconds: number;
  connections: number;
  /** The paced run's rate as a share of the API-alone figure, e.g. 0.75; 0 skips it. */
  share: number;
  /** Pairs of runs, the API alone and `npm start`, in alternating order; 0 runs only the paced one. */
  pairs: number;
  /**
   * A fixed rate in records/s, instead of `share` of the API-alone figure: the API alone and then
   * `npm start` paced at it, and the difference of their CPU a record, delivery's. A fixed load
   * makes the CPU a record of two versions of the code compare however fast the machine runs.
   */
  rate?: number;
}

interface RunFigures {
  load: LoadResult;
  /** Seconds from the measured run's start until the last of them was delivered (npm start only). */
  deliveredAfter?: number;
  lagP50?: number;
  lagP99?: number;
  serverCpuPerRecordUs: number;
  /** Of which on the server's main thread (the event loop that also answers HTTP). */
  mainThreadCpuPerRecordUs: number;
  /** The whole machine's busy CPU a record: the server, Redis, the load generator and the rest. */
  machineCpuPerRecordUs: number;
}

const WARMUP_SECONDS = 3;
const SAMPLE_MS = 100;

/** When a sampled counter passed `k`, interpolated between the two samples around it. */
function whenPassed(samples: ReadonlyArray<readonly [number, number]>, k: number, from: number): [number, number] {
  let i = from;
  while (i < samples.length && samples[i]![1] < k) i++;
  if (i >= samples.length) return [Number.NaN, i];
  if (i === 0) return [samples[0]![0], 0];
  const [t0, c0] = samples[i - 1]!;
  const [t1, c1] = samples[i]!;
  return [c1 === c0 ? t1 : t0 + ((k - c0) / (c1 - c0)) * (t1 - t0), i];
}

/** Lags (ms) of every `step`-th record from `first` to `last`, sorted. */
function lags(accepted: Array<[number, number]>, delivered: Array<[number, number]>, first: number, last: number): number[] {
  const out: number[] = [];
  const step = Math.max(1, Math.floor((last - first) / 5000));
  let a = 0;
  let d = 0;
  for (let k = first + 1; k <= last; k += step) {
    let ta: number;
    let td: number;
    [ta, a] = whenPassed(accepted, k, a);
    [td, d] = whenPassed(delivered, k, d);
    if (Number.isFinite(ta) && Number.isFinite(td)) out.push(Math.max(0, td - ta));
  }
  return out.sort((x, y) => x - y);
}

async function runOnce(loader: ChildProcess, opts: SingleEventsOptions, role: 'api' | 'all', rate?: number): Promise<RunFigures> {
  const prefix = `bench-e2e1-${randomUUID().slice(0, 8)}`;
  const token = generateToken();
  const trackerId = 'single';
  // The same tracker in both roles: with `api` nothing delivers, and its records wait in the ingest queue.
  const server = await startTributary({
    redis: opts.redis,
    redisUrl: opts.redisUrl,
    prefix,
    trackers: [{ id: trackerId, token, destinations: [{ id: 'local', type: 'local' }] }],
    processes: 1,
    // BENCH_CPU_PROF: each npm start run writes a V8 CPU profile there as it exits.
    nodeArgs: process.env.BENCH_CPU_PROF && role === 'all' ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [],
    role,
    env: { DELIVERY_DISCOVER_INTERVAL_MS: '200' },
  });
  const status = deliveryKeys(prefix, { trackerId, destinationId: 'local' }).status;
  const plan = (seconds: number): LoadPlan => ({ url: `http://127.0.0.1:${server.port}`, path: '/v3/event', connections: opts.connections, duration: seconds, recordsPerRequest: 1, seed: 11, authorization: `Tracker ${token}`, ...(rate ? { rate } : {}) });
  const run = (seconds: number) => ask<Message & { result: LoadResult }>(loader, { type: 'run', plan: plan(seconds) as unknown as Message[string] }, 'result', (seconds + 60) * 1000);
  try {
    await run(WARMUP_SECONDS);
    const before = await server.idleCounts();
    if (role === 'all') await poll('the warmup delivered', async () => (Number(await opts.redis.hget(status, 'delivered')) >= before.records ? true : undefined), 120_000);
    const accepted: Array<[number, number]> = [];
    const delivered: Array<[number, number]> = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const [counts, done] = await Promise.all([server.counts(), role === 'all' ? opts.redis.hget(status, 'delivered') : Promise.resolve('0')]);
        const now = performance.now();
        accepted.push([now, counts.records]);
        delivered.push([now, Number(done ?? 0)]);
        await new Promise((r) => setTimeout(r, SAMPLE_MS));
      }
    })();
    const started = performance.now();
    const cpu0 = server.pids.reduce((sum, pid) => sum + processCpuSeconds(pid), 0);
    const main0 = mainThreadCpuSeconds(server.pids[0]);
    const machine0 = machineCpuSeconds();
    const { result: load } = await run(opts.seconds);
    const after = await server.idleCounts();
    const serverCpu = server.pids.reduce((sum, pid) => sum + processCpuSeconds(pid), 0) - cpu0;
    const mainCpu = mainThreadCpuSeconds(server.pids[0]) - main0;
    const machineCpu = machineCpuSeconds() - machine0;
    let deliveredAfter: number | undefined;
    if (role === 'all') {
      await poll('every record delivered', async () => (delivered.length > 0 && delivered[delivered.length - 1]![1] >= after.records ? true : undefined), 600_000, SAMPLE_MS);
      deliveredAfter = (delivered.find(([, d]) => d >= after.records)![0] - started) / 1000;
    }
    sampling = false;
    await sampler;
    const records = Math.max(1, after.records - before.records);
    const figures: RunFigures = { load, serverCpuPerRecordUs: (serverCpu * 1e6) / records, mainThreadCpuPerRecordUs: (mainCpu * 1e6) / records, machineCpuPerRecordUs: (machineCpu * 1e6) / records };
    if (role === 'all') {
      const sorted = lags(accepted, delivered, before.records, after.records);
      Object.assign(figures, { deliveredAfter, lagP50: percentile(sorted, 50), lagP99: percentile(sorted, 99) });
    }
    return figures;
  } finally {
    await server.stop();
    await deletePrefix(opts.redis, prefix);
  }
}

function line(label: string, r: RunFigures): string {
  const failures = r.load.non2xx + r.load.errors + r.load.timeouts;
  const delivery = r.deliveredAfter === undefined ? '' : `; all delivered ${fmt(r.deliveredAfter, 1)} s after the start, lag p50 ${fmt(r.lagP50!)} ms p99 ${fmt(r.lagP99!)} ms`;
  return `${label.padEnd(34)} ${fmt(r.load.requestsPerSecond).padStart(7)} records/s (HTTP p99 ${fmt(r.load.p99)} ms, ${fmt(r.serverCpuPerRecordUs)} µs of server CPU a record, ${fmt(r.mainThreadCpuPerRecordUs)} on its main thread, ${fmt(r.machineCpuPerRecordUs)} machine-wide${failures ? `, ${failures} failed` : ''})${delivery}`;
}

/**
 * `pairs` pairs of runs, the API alone and `npm start` unpaced, in alternating order (on a VM
 * whose speed drifts, runs one after the other would measure the drift): the median of the pairs'
 * ratios is the figure. Then `npm start` paced at `share` of the API alone's median.
 */
export async function singleEvents(opts: SingleEventsOptions): Promise<void> {
  buildChildren();
  const loader = forkChild('load-generator.ts');
  try {
    await nextMessage(loader, 'ready');
    console.log(`single events, ${opts.connections} connections, ${opts.seconds} s a run after ${WARMUP_SECONDS} s of warmup, ${opts.pairs} pairs in alternating order`);
    const ratios: number[] = [];
    const cpuRatios: number[] = [];
    const apiRates: number[] = [];
    const lagsP99: number[] = [];
    for (let pair = 0; pair < opts.pairs; pair++) {
      const order: Array<'api' | 'all'> = pair % 2 === 0 ? ['api', 'all'] : ['all', 'api'];
      const runs: Partial<Record<'api' | 'all', RunFigures>> = {};
      for (const role of order) {
        runs[role] = await runOnce(loader, opts, role);
        console.log(line(`#${pair + 1} ${role === 'api' ? 'API alone (start:api)' : 'npm start, unpaced'}`, runs[role]!));
      }
      ratios.push(runs.all!.load.requestsPerSecond / runs.api!.load.requestsPerSecond);
      cpuRatios.push(runs.api!.machineCpuPerRecordUs / runs.all!.machineCpuPerRecordUs);
      apiRates.push(runs.api!.load.requestsPerSecond);
      lagsP99.push(runs.all!.lagP99!);
    }
    if (opts.pairs > 0) {
      console.log(`npm start / API alone             ${ratios.map((r) => `${fmt(r, 2)}×`).join(', ')}: median ${fmt(median(ratios), 2)}×, delivery lag p99 at most ${fmt(Math.max(...lagsP99))} ms (goal: ≥ 0.75× with every record delivered, lag p99 ≤ 1 000 ms)`);
      // What a record costs the whole machine (server, Redis, load generator) through npm start against the API alone:
      // where CPU bounds both runs the records/s ratio follows it, and it shows whether a change cut work or only moved it.
      console.log(`machine CPU a record, API alone ÷ npm start: ${cpuRatios.map((r) => `${fmt(r, 2)}×`).join(', ')}: median ${fmt(median(cpuRatios), 2)}×`);
    }
    if (opts.rate) {
      // The same fixed load on both: what npm start costs beyond the API alone is delivery's share.
      const api = await runOnce(loader, opts, 'api', opts.rate);
      console.log(line(`API alone, paced at ${fmt(opts.rate)}/s`, api));
      const all = await runOnce(loader, opts, 'all', opts.rate);
      console.log(line(`npm start, paced at ${fmt(opts.rate)}/s`, all));
      const extra = (pick: (r: RunFigures) => number) => fmt(pick(all) - pick(api));
      console.log(`delivery's CPU a record at ${fmt(opts.rate)}/s (npm start − API alone): ${extra((r) => r.serverCpuPerRecordUs)} µs in the server, ${extra((r) => r.mainThreadCpuPerRecordUs)} on its main thread, ${extra((r) => r.machineCpuPerRecordUs)} machine-wide`);
    } else if (opts.share > 0 && opts.pairs > 0) {
      const rate = Math.round(median(apiRates) * opts.share);
      const paced = await runOnce(loader, opts, 'all', rate);
      console.log(line(`npm start, paced at ${fmt(rate)}/s`, paced));
    } else return;
    console.log(`  (autocannon's fixed rate sends each connection's share in bursts; in our runs it sent 4–7 % fewer requests than asked)`);
  } finally {
    loader.send({ type: 'stop' });
    await stopChild(loader);
  }
}
