/**
 * `npm run bench:soak` — memory under a steady load: `npm start` (the API and the delivery to the
 * local warehouse in one process) paced at a fixed rate of single events for half an hour, its
 * memory sampled from /proc and its /metrics every 30 s, then every record counted in the
 * warehouse (exactly once: as many rows and distinct `_id`s as records accepted).
 *
 * The figure is whether RSS levels off: the slope of RSS over the last third of the run (MiB a
 * minute, least squares), beside the V8 heap's, so that growth outside the heap (DuckDB's buffer
 * pool, the allocator) shows as the difference.
 *
 * Env: BENCH_SOAK_MINUTES (default 30), BENCH_SOAK_RATE (records/s, default 1 950),
 * BENCH_SOAK_SAMPLE_SECONDS (default 30), BENCH_SOAK_CONNECTIONS (default 8), BENCH_SOAK_ENV
 * (settings of the server's own, `A=1,B=2`, e.g. `WAREHOUSE_MEMORY_LIMIT=1GB` to compare),
 * BENCH_REDIS_URL (default redis://127.0.0.1:6379).
 */
import { readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { deliveryKeys } from '../jobs/delivery/keys';
import { generateToken } from '../src/core/trackers/tokens';
import { ask, buildChildren, forkChild, nextMessage, stopChild, type Message } from './child';
import { fmt } from './format';
import { firstRow } from './warehouse';
import type { LoadPlan, LoadResult } from './load-generator';
import { deletePrefix } from './queue-records';
import { poll, startTributary } from './tributary-server';

const MINUTES = Number(process.env.BENCH_SOAK_MINUTES ?? 30);
const RATE = Number(process.env.BENCH_SOAK_RATE ?? 1950);
const SAMPLE_SECONDS = Number(process.env.BENCH_SOAK_SAMPLE_SECONDS ?? 30);
const CONNECTIONS = Number(process.env.BENCH_SOAK_CONNECTIONS ?? 8);
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const SERVER_ENV = Object.fromEntries(
  (process.env.BENCH_SOAK_ENV ?? '')
    .split(',')
    .filter(Boolean)
    .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
);
const MiB = 1024 * 1024;

interface Sample {
  minute: number;
  rssMiB: number;
  anonMiB: number;
  heapUsedMiB: number;
  heapTotalMiB: number;
  externalMiB: number;
  warehouseMiB: number;
  accepted: number;
  delivered: number;
}

/** A line of /proc/<pid>/status in MiB (`VmRSS`, `RssAnon`…), or NaN. */
function statusMiB(pid: number, field: string): number {
  try {
    const found = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return found ? Number(found[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

function metricValue(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line === undefined ? Number.NaN : Number(line.slice(line.lastIndexOf(' ') + 1));
}

function fileMiB(file: string): number {
  try {
    return statSync(file).size / MiB;
  } catch {
    return 0;
  }
}

/** Least-squares slope of y over x. */
function slope(points: ReadonlyArray<readonly [number, number]>): number {
  const n = points.length;
  if (n < 2) return Number.NaN;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const sxy = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return sxy / sxx;
}

/** Rows and distinct `_id`s of the warehouse's events table, read once the server has stopped. */
async function countEvents(file: string): Promise<{ rows: number; ids: number }> {
  const [rows, ids] = await firstRow(file, 'select count(*)::BIGINT, count(distinct _id)::BIGINT from events');
  return { rows: Number(rows), ids: Number(ids) };
}

async function main(): Promise<void> {
  buildChildren();
  const redis = new Redis(REDIS_URL, { lazyConnect: true });
  await redis.connect();
  const prefix = `bench-soak-${randomUUID().slice(0, 8)}`;
  const token = generateToken();
  const trackerId = 'soak';
  const loader = forkChild('load-generator.ts');
  const server = await startTributary({
    redis,
    redisUrl: REDIS_URL,
    prefix,
    trackers: [{ id: trackerId, token, destinations: [{ id: 'local', type: 'local' }] }],
    processes: 1,
    nodeArgs: [],
    role: 'all',
    env: SERVER_ENV,
  });
  const pid = server.pids[0]!;
  const warehouse = path.join(server.dataDir, 'warehouse', `${trackerId}.duckdb`);
  const status = deliveryKeys(prefix, { trackerId, destinationId: 'local' }).status;
  const samples: Sample[] = [];
  let keepData = false;
  try {
    await nextMessage(loader, 'ready');
    console.log(
      `soak: npm start, single events paced at ${fmt(RATE)}/s over ${CONNECTIONS} connections for ${MINUTES} min, memory sampled every ${SAMPLE_SECONDS} s${Object.keys(SERVER_ENV).length ? `, server env ${JSON.stringify(SERVER_ENV)}` : ''}`,
    );
    console.log('   min   RSS MiB  anon MiB  heap used/total MiB  external MiB  warehouse MiB   accepted  delivered');
    const plan: LoadPlan = { url: `http://127.0.0.1:${server.port}`, path: '/v3/event', connections: CONNECTIONS, duration: MINUTES * 60, recordsPerRequest: 1, seed: 7, authorization: `Tracker ${token}`, rate: RATE };
    const started = performance.now();
    const load = ask<Message & { result: LoadResult }>(loader, { type: 'run', plan: plan as unknown as Message[string] }, 'result', (MINUTES * 60 + 120) * 1000);
    let loading = true;
    void load.finally(() => (loading = false)).catch(() => undefined);
    const sample = async (): Promise<void> => {
      const [metrics, delivered] = await Promise.all([fetch(`http://127.0.0.1:${server.port}/metrics`).then((r) => r.text()), redis.hget(status, 'delivered')]);
      const s: Sample = {
        minute: (performance.now() - started) / 60_000,
        rssMiB: statusMiB(pid, 'VmRSS'),
        anonMiB: statusMiB(pid, 'RssAnon'),
        heapUsedMiB: metricValue(metrics, 'nodejs_heap_size_used_bytes') / MiB,
        heapTotalMiB: metricValue(metrics, 'nodejs_heap_size_total_bytes') / MiB,
        externalMiB: metricValue(metrics, 'nodejs_external_memory_bytes') / MiB,
        warehouseMiB: fileMiB(warehouse),
        accepted: metricValue(metrics, 'tributary_records_accepted_total{kind="event"}'),
        delivered: Number(delivered ?? 0),
      };
      samples.push(s);
      console.log(
        `${fmt(s.minute, 1).padStart(6)} ${fmt(s.rssMiB).padStart(9)} ${fmt(s.anonMiB).padStart(9)} ${`${fmt(s.heapUsedMiB)} / ${fmt(s.heapTotalMiB)}`.padStart(20)} ${fmt(s.externalMiB).padStart(13)} ${fmt(s.warehouseMiB).padStart(14)} ${fmt(s.accepted).padStart(10)} ${fmt(s.delivered).padStart(10)}`,
      );
    };
    await sample();
    while (loading) {
      const next = started + samples.length * SAMPLE_SECONDS * 1000;
      await Promise.race([new Promise((r) => setTimeout(r, Math.max(0, next - performance.now()))), load.catch(() => undefined)]);
      if (loading) await sample();
    }
    const { result } = await load;
    const after = await server.idleCounts();
    await poll('every record delivered', async () => (Number(await redis.hget(status, 'delivered')) >= after.records ? true : undefined), 600_000, 250);
    await sample();
    const code = await server.stop({ keepData: (keepData = true) });
    const stored = await countEvents(warehouse);
    const failed = result.non2xx + result.errors + result.timeouts;

    const third = samples.filter((s) => s.minute >= (MINUTES * 2) / 3 && s.minute <= MINUTES);
    const rssSlope = slope(third.map((s) => [s.minute, s.rssMiB]));
    const heapSlope = slope(third.map((s) => [s.minute, s.heapTotalMiB]));
    const first = samples.find((s) => s.minute >= 1) ?? samples[0]!;
    const peak = Math.max(...samples.map((s) => s.rssMiB));
    console.log(
      `load: ${fmt(result.requestsPerSecond)} records/s offered on average, ${fmt(result.total2xx)} answered 2xx${failed ? `, ${failed} failed` : ''}; server exited with ${code}`,
    );
    console.log(`exactly once: ${fmt(after.records)} accepted, ${fmt(stored.rows)} rows in events, ${fmt(stored.ids)} distinct _id — ${after.records === stored.rows && stored.rows === stored.ids ? 'ok' : 'MISMATCH'}`);
    console.log(
      `RSS: ${fmt(first.rssMiB)} MiB after a minute, peak ${fmt(peak)} MiB, ${fmt(samples[samples.length - 1]!.rssMiB)} MiB at the end; slope over the last third ${fmt(rssSlope, 2)} MiB/min (V8 heap total ${fmt(heapSlope, 2)} MiB/min), warehouse file ${fmt(samples[samples.length - 1]!.warehouseMiB)} MiB`,
    );
  } finally {
    loader.send({ type: 'stop' });
    await stopChild(loader);
    await server.stop();
    if (keepData) rmSync(server.dataDir, { recursive: true, force: true });
    await deletePrefix(redis, prefix);
    redis.disconnect();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
