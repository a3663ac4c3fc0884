/**
 * `npm run bench` (also `npm run bench:lane`) — what an import does to live traffic. `npm start`
 * (the API and the delivery to the local warehouse in one process) takes single events at a fixed
 * rate for a while (phase A); then the same load again while `tributary import` sends a file of
 * BENCH_LANE_RECORDS (default 1 000 000) past events through the history lane (phase B). Each phase
 * prints the live requests' latency (p50, p99) and the live delivery lag (the age of the oldest live
 * record not yet delivered, sampled every 200 ms: p50, p99, max), then B against A. After B, every
 * record is counted in the warehouse: exactly once, live and imported alike.
 *
 * The import runs as the CLI runs (`dist/cli/tributary.js`), on the same two cores as the server,
 * Redis and the load generator; its peak RSS is printed (the file streams: it should stay flat
 * whatever the file's size). Each phase also prints where the two cores went, from /proc: the relay
 * (and its event loop's thread alone), the split worker, Redis, the import and the load generator;
 * and what can hold a live request up: the relay's event-loop delay (p99 and max, from its /metrics)
 * and the Redis commands that took 1 ms or more (its SLOWLOG, set so for the run and restored).
 *
 * BENCH_LANE_SPLIT=1 runs the API (`start:api`) and the delivery (`start:worker`) as two processes
 * instead, as a deployment that separates them does: the API's event loop then carries no delivery.
 *
 * Env: BENCH_LANE_RECORDS (default 1 000 000), BENCH_LANE_SECONDS (each phase, default 60),
 * BENCH_LANE_RATE (live events/s, default 400), BENCH_LANE_CONNECTIONS (default 4), BENCH_LANE_NICE (the
 * import's `--nice`, default 19 as the CLI's),
 * BENCH_REDIS_URL (default redis://127.0.0.1:6379).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { deliveryKeys } from '../jobs/delivery/keys';
import { generateToken } from '../src/core/trackers/tokens';
import { ask, buildChildren, forkChild, nextMessage, stopChild, type Message } from './child';
import { makeEvents } from './events';
import { fmt } from './format';
import { firstRow } from './warehouse';
import type { LoadPlan, LoadResult } from './load-generator';
import { deletePrefix } from './queue-records';
import { machineCpuSeconds, mainThreadCpuSeconds, processCpuSeconds, redisCpuSeconds } from './proc-stats';
import { metric, poll, spawnBenchWorker, startTributary } from './tributary-server';

const RECORDS = Number(process.env.BENCH_LANE_RECORDS ?? 1_000_000);
const SECONDS = Number(process.env.BENCH_LANE_SECONDS ?? 60);
const RATE = Number(process.env.BENCH_LANE_RATE ?? 400);
const CONNECTIONS = Number(process.env.BENCH_LANE_CONNECTIONS ?? 4);
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const SAMPLE_MS = 200;
const WARMUP_SECONDS = 10;
const CLI = path.join(__dirname, '..', 'dist', 'cli', 'tributary.js');
const SPLIT = process.env.BENCH_LANE_SPLIT === '1';

interface Phase {
  load: LoadResult;
  /** Live delivery lag samples, ms. */
  lags: number[];
  /** Cores each process kept busy over the phase, on average (CPU seconds / wall seconds). */
  cores: Record<CpuPart, number>;
  /** The relay's event-loop delay over the phase, ms (prom-client's, which resets it at each read of /metrics). */
  loopDelay: { p99: number; max: number };
  /** Redis commands of 1 ms or more during the phase: how many, their sum and the longest, ms. */
  slowRedis: { count: number; totalMs: number; maxMs: number; commands: string };
}

/** Redis's slow log during the run: every command of at least this long (µs), and room for all of them. */
const SLOWLOG_MICROS = 1000;
const SLOWLOG_LENGTH = 100_000;

const CPU_PARTS = ['relay', 'event loop', 'worker', 'redis', 'import', 'load generator', 'machine'] as const;
type CpuPart = (typeof CPU_PARTS)[number];

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** An NDJSON file of `n` past events (2025), as an export from another tool would hold them. */
async function writeImportFile(file: string, n: number): Promise<number> {
  const out = createWriteStream(file);
  const pool = makeEvents(1000, 11);
  for (let i = 0; i < n; i++) {
    const base = pool[i % pool.length]!;
    const line = `${JSON.stringify({ ...base, _event_at: new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString(), imported_n: i })}\n`;
    if (!out.write(line)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  return statSync(file).size;
}

function rssMiB(pid: number): number {
  try {
    const found = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return found ? Number(found[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

async function countEvents(file: string): Promise<{ rows: number; ids: number; imported: number }> {
  const [rows, ids, imported] = await firstRow(file, 'select count(*)::BIGINT, count(distinct _id)::BIGINT, count(imported_n)::BIGINT from events');
  return { rows: Number(rows), ids: Number(ids), imported: Number(imported) };
}

async function main(): Promise<void> {
  buildChildren();
  const redis = new Redis(REDIS_URL, { lazyConnect: true });
  await redis.connect();
  const prefix = `bench-lane-${randomUUID().slice(0, 8)}`;
  const token = generateToken();
  const trackerId = 'lane';
  const files = mkdtempSync(path.join(tmpdir(), 'bench-lane-'));
  const importFile = path.join(files, 'history.ndjson');
  const bytes = await writeImportFile(importFile, RECORDS);
  const loader = forkChild('load-generator.ts');
  const server = await startTributary({ redis, redisUrl: REDIS_URL, prefix, trackers: [{ id: trackerId, token, destinations: [{ id: 'local', type: 'local' }] }], processes: 1, nodeArgs: [], role: SPLIT ? 'api' : 'all' });
  const worker = SPLIT ? spawnBenchWorker(REDIS_URL, prefix, server.dataDir) : undefined;
  const workerExited = worker ? new Promise((resolve) => worker.once('exit', resolve)) : Promise.resolve();
  const stopWorker = async () => {
    if (worker && worker.exitCode === null) worker.kill('SIGTERM');
    await workerExited;
  };
  const keys = deliveryKeys(prefix, { trackerId, destinationId: 'local' });
  const warehouse = path.join(server.dataDir, 'warehouse', `${trackerId}.duckdb`);
  let keepData = false;

  /** Age of the oldest live record not yet delivered (0 when none waits). */
  const liveLag = async (): Promise<number> => {
    // The cursor is the last delivered record: `<entry id>#<its place in the entry's block>`.
    const cursor = await redis.get(keys.cursor);
    const [entry, place] = (cursor ?? '').split('#');
    const entries = await redis.xrange(keys.stream, entry ? entry : '-', '+', 'COUNT', 2);
    const next = entries.find(([id, fields]) => {
      if (id !== entry) return true;
      const n = Number(fields[fields.indexOf('n') + 1] ?? 1);
      return place !== undefined && Number(place) < n - 1;
    });
    return next ? Math.max(0, Date.now() - Number(next[0].split('-')[0])) : 0;
  };

  /** CPU seconds so far of each part; the import's is its last reading while it ran (its process may be gone by the phase's end). */
  let importPid: number | undefined;
  let importCpu = 0;
  const readImportCpu = (): number => {
    const now = processCpuSeconds(importPid);
    if (Number.isFinite(now)) importCpu = now;
    return importCpu;
  };
  const cpuNow = async (): Promise<Record<CpuPart, number>> => ({
    relay: processCpuSeconds(server.pids[0]),
    'event loop': mainThreadCpuSeconds(server.pids[0]),
    worker: worker?.pid ? processCpuSeconds(worker.pid) : 0,
    redis: await redisCpuSeconds(redis),
    import: readImportCpu(),
    'load generator': processCpuSeconds(loader.pid),
    machine: machineCpuSeconds(),
  });

  const loopDelay = async (): Promise<Phase['loopDelay']> => {
    const text = await server.metrics();
    return { p99: metric(text, 'nodejs_eventloop_lag_p99_seconds') * 1000, max: metric(text, 'nodejs_eventloop_lag_max_seconds') * 1000 };
  };
  const slowRedis = async (): Promise<Phase['slowRedis']> => {
    const entries = (await redis.call('SLOWLOG', 'GET', String(SLOWLOG_LENGTH))) as Array<[number, number, number, string[]]>;
    const micros = entries.map((e) => Number(e[2]));
    const byCommand = new Map<string, number>();
    for (const e of entries) byCommand.set(String(e[3][0]).toUpperCase(), (byCommand.get(String(e[3][0]).toUpperCase()) ?? 0) + 1);
    return { count: entries.length, totalMs: micros.reduce((a, b) => a + b, 0) / 1000, maxMs: Math.max(0, ...micros) / 1000, commands: [...byCommand].map(([c, n]) => `${c} ${n}`).join(', ') };
  };

  const phase = async (name: string, seconds = SECONDS): Promise<Phase> => {
    await loopDelay();
    await redis.call('SLOWLOG', 'RESET');
    const cpu0 = await cpuNow();
    const started = performance.now();
    const plan: LoadPlan = { url: `http://127.0.0.1:${server.port}`, path: '/v3/event', connections: CONNECTIONS, duration: seconds, recordsPerRequest: 1, seed: name.charCodeAt(0), authorization: `Tracker ${token}`, rate: RATE };
    const load = ask<Message & { result: LoadResult }>(loader, { type: 'run', plan: plan as unknown as Message[string] }, 'result', (seconds + 120) * 1000);
    let loading = true;
    void load.finally(() => (loading = false)).catch(() => undefined);
    const lags: number[] = [];
    while (loading) {
      lags.push(await liveLag());
      readImportCpu();
      await new Promise((r) => setTimeout(r, SAMPLE_MS));
    }
    const result = (await load).result;
    const cpu1 = await cpuNow();
    const wall = (performance.now() - started) / 1000;
    const cores = Object.fromEntries(CPU_PARTS.map((part) => [part, (cpu1[part] - cpu0[part]) / wall])) as Record<CpuPart, number>;
    return { load: result, lags, cores, loopDelay: await loopDelay(), slowRedis: await slowRedis() };
  };

  const show = (name: string, p: Phase): void => {
    const lags = [...p.lags].sort((a, b) => a - b);
    const failed = p.load.non2xx + p.load.errors + p.load.timeouts;
    console.log(
      `${name}: ${fmt(p.load.requestsPerSecond)} live events/s, latency p50 ${fmt(p.load.p50, 1)} ms p99 ${fmt(p.load.p99, 1)} ms; live delivery lag p50 ${fmt(percentile(lags, 50))} ms p99 ${fmt(percentile(lags, 99))} ms max ${fmt(lags.at(-1) ?? Number.NaN)} ms${failed ? `; ${failed} requests failed` : ''}`,
    );
    const parts = CPU_PARTS.filter((part) => part !== 'machine' && !(part === 'worker' && !SPLIT) && !(part === 'import' && p.cores.import === 0));
    console.log(`    cores busy: ${parts.map((part) => `${part} ${fmt(p.cores[part], 2)}`).join(', ')}; the machine ${fmt(p.cores.machine, 2)} of 2`);
    console.log(
      `    the relay's event-loop delay p99 ${fmt(p.loopDelay.p99, 1)} ms, max ${fmt(p.loopDelay.max, 1)} ms (a 10 ms timer's interval); Redis commands of 1 ms or more: ${p.slowRedis.count}${p.slowRedis.count ? ` (${p.slowRedis.commands}), ${fmt(p.slowRedis.totalMs)} ms in all, the longest ${fmt(p.slowRedis.maxMs, 1)} ms` : ''}`,
    );
  };

  const slowlogWas = (await redis.config('GET', 'slowlog-*')) as string[];
  await redis.config('SET', 'slowlog-log-slower-than', String(SLOWLOG_MICROS), 'slowlog-max-len', String(SLOWLOG_LENGTH));
  try {
    await nextMessage(loader, 'ready');
    console.log(`lane: ${SPLIT ? 'start:api and start:worker' : 'npm start'} with a local warehouse, ${fmt(RATE)} live single events/s over ${CONNECTIONS} connections, phases of ${SECONDS} s; import of ${fmt(RECORDS)} records (${fmt(bytes / 1024 / 1024)} MiB of NDJSON) in B`);
    // JIT, connections and the warehouse's first writes before anything is measured.
    await phase('warm-up', WARMUP_SECONDS);
    const a = await phase('A (live only)');
    show('A (live only)         ', a);

    const importStarted = performance.now();
    const child = spawn(process.execPath, [CLI, 'import', trackerId, importFile, '--json', '--nice', process.env.BENCH_LANE_NICE ?? '19'], { env: { ...process.env, REDIS_URL, REDIS_PREFIX: prefix, DATA_DIR: server.dataDir }, stdio: ['ignore', 'pipe', 'inherit'] });
    importPid = child.pid;
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    let peakRss = 0;
    const rssTimer = setInterval(() => (peakRss = Math.max(peakRss, rssMiB(child.pid!))), SAMPLE_MS);
    const imported = new Promise<number>((resolve) => child.once('exit', (code) => resolve(code ?? -1)));
    let importSeconds = Number.NaN;
    void imported.then(() => (importSeconds = (performance.now() - importStarted) / 1000));
    const b = await phase('B (live + import)');
    show('B (live + import)     ', b);
    const code = await imported;
    clearInterval(rssTimer);
    if (code !== 0) throw new Error(`the import exited with ${code}: ${out}`);
    const summary = (JSON.parse(out) as Array<{ imported: number; failed: number }>)[0]!;
    const lagA = [...a.lags].sort((x, y) => x - y);
    const lagB = [...b.lags].sort((x, y) => x - y);
    const ratio = (x: number, y: number) => (y > 0 ? x / y : Number.NaN);
    console.log(
      `B against A: latency p99 ×${fmt(ratio(b.load.p99, a.load.p99), 2)}, live delivery lag p99 ×${fmt(ratio(percentile(lagB, 99), percentile(lagA, 99)), 2)} (the goal: within ×1.20 each)`,
    );
    console.log(`import: ${fmt(summary.imported)} records into the lane in ${fmt(importSeconds, 1)} s (${fmt(summary.imported / importSeconds)} records/s), peak RSS of the CLI ${fmt(peakRss)} MiB`);

    const after = await server.idleCounts();
    const historyDone = Date.now();
    await poll('every record delivered', async () => ((await countWhileRunning()) ? true : undefined), 1_800_000, 1000);
    async function countWhileRunning(): Promise<boolean> {
      const [delivered, live, history] = await Promise.all([redis.hget(keys.status, 'delivered'), redis.get(keys.queued), redis.get(keys.historyQueued)]);
      return Number(delivered ?? 0) >= after.records && Number(live ?? 0) === 0 && Number(history ?? 0) === 0;
    }
    console.log(`history lane drained ${fmt((Date.now() - historyDone) / 1000, 1)} s after the live load ended`);
    await stopWorker();
    await server.stop({ keepData: (keepData = true) });
    const stored = await countEvents(warehouse);
    const expected = after.records + summary.imported;
    console.log(`exactly once: ${fmt(after.records)} live + ${fmt(summary.imported)} imported, ${fmt(stored.rows)} rows (${fmt(stored.imported)} imported), ${fmt(stored.ids)} distinct _id — ${stored.rows === expected && stored.ids === expected ? 'ok' : 'MISMATCH'}`);
  } finally {
    await redis.config('SET', ...(slowlogWas as [string, string, ...string[]]));
    loader.send({ type: 'stop' });
    await stopChild(loader);
    await stopWorker();
    await server.stop();
    if (keepData) rmSync(server.dataDir, { recursive: true, force: true });
    rmSync(files, { recursive: true, force: true });
    await deletePrefix(redis, prefix);
    redis.disconnect();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
