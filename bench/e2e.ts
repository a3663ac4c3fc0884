/**
 * `npm run bench:e2e` — HTTP in, local warehouse out, with Tributary run as `npm start` runs it
 * (compiled, API and workers in one process). Reports end-to-end records/s, delivery lag p50/p99,
 * Redis memory per queued record, destination writes per 1 000 records, Redis bytes per record of a
 * disabled destination's backlog as routed and once compacted (and so records per GiB), and, as a baseline measured
 * in the same run, the local connector writing the same records directly (no HTTP, no Redis).
 *
 * Env: BENCH_EVENTS (default 200 000), BENCH_BATCH (records per request, default 100),
 * BENCH_CONCURRENCY (requests in flight, default 16), BENCH_RATE (records/s to pace at; default 0 =
 * as fast as possible), BENCH_PAUSED_EVENTS (single-event requests to a disabled destination, default
 * 40 000), BENCH_PAUSED_CONCURRENCY (of them in flight, default 50; 1 is a quiet tracker), BENCH_CPU_PROF
 * (a directory: the server writes a V8 CPU profile there as it exits), BENCH_REDIS_URL (default redis://127.0.0.1:6379), BENCH_ONLY=paused (only the paused
 * backlog: a minute instead of several, for work on the queue's density).
 *
 * Then single events (bench/e2e-single.ts; alone with BENCH_ONLY=single): the API alone and
 * `npm start` side by side, loaded by autocannon in a process of its own, `npm start` once unpaced
 * in BENCH_SINGLE_PAIRS (default 3) alternated pairs, then once paced at BENCH_SINGLE_SHARE
 * (default 0.75; 0 skips it) of the API-alone figure, each with its delivery lag.
 * BENCH_SINGLE_SECONDS (default 10), BENCH_SINGLE_CONNECTIONS (default 50), BENCH_SINGLE_RATE (records/s:
 * instead, the API alone and npm start both paced at this fixed rate, and delivery's CPU a record
 * as their difference, to compare versions of the code; with BENCH_SINGLE_PAIRS=0 these are the
 * only runs).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { v7 as uuidv7 } from 'uuid';
import { localConnector } from '../connectors/local';
import { deliveryKeys } from '../jobs/delivery/keys';
import { createLogger } from '../src/core/logger';
import type { TrackedRecord } from '../src/core/records/types';
import { TrackerStore } from '../src/core/trackers/store';
import { generateToken } from '../src/core/trackers/tokens';
import { TrackerSchema } from '../src/core/trackers/types';
import { serverNodeFlags } from './child';
import { singleEvents } from './e2e-single';
import { makeEvents } from './events';
import { fmt, percentile } from './format';

const N = Number(process.env.BENCH_EVENTS ?? 200_000);
const BATCH = Number(process.env.BENCH_BATCH ?? 100);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** Records per second to send at; 0 sends as fast as the server answers (then lag measures the backlog). */
const RATE = Number(process.env.BENCH_RATE ?? 0);
/** `paused` runs the paused-backlog phase alone. */
const ONLY = process.env.BENCH_ONLY;
const ROOT = path.join(__dirname, '..');

/** Baseline: the same records written straight into a fresh warehouse by the connector, in its own batch size. */
async function baseline(events: ReturnType<typeof makeEvents>): Promise<number> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'tributary-bench-base-'));
  const writer = await localConnector.open({ trackerId: 'base', destinationId: 'local', settings: {}, dataDir, logger: createLogger('silent'), now: () => new Date() });
  const now = new Date().toISOString();
  const records: TrackedRecord[] = events.map(({ _event, _uid, _sid, ...properties }) => ({ kind: 'event', id: uuidv7(), receivedAt: now, eventAt: now, event: String(_event), uid: String(_uid), sid: String(_sid), properties }));
  const started = performance.now();
  for (let i = 0; i < records.length; i += localConnector.batch.maxRecords) {
    await writer.write(records.slice(i, i + localConnector.batch.maxRecords), new AbortController().signal);
  }
  const seconds = (performance.now() - started) / 1000;
  await writer.close();
  rmSync(dataDir, { recursive: true, force: true });
  return records.length / seconds;
}

/** Single-event requests for the paused-destination phase, and how many at once. */
const PAUSED_RECORDS = Number(process.env.BENCH_PAUSED_EVENTS ?? 40_000);
const PAUSED_CONCURRENCY = Number(process.env.BENCH_PAUSED_CONCURRENCY ?? 50);

/** A paused backlog's size in Redis: its stream's entries and bytes a record. */
interface BacklogSize {
  entries: number;
  bytesPerRecord: number;
}

/**
 * What a destination's backlog costs in Redis: single-event requests to a tracker whose only
 * destination is disabled, measured as the stream's MEMORY USAGE once the router has moved them all
 * to its stream (`routed`), and again once the compactor (jobs/spill/compactor.ts) has left it alone
 * for 3 s (`compacted`). Below DESTINATION_REDIS_CAP_RECORDS, so nothing spills.
 */
async function pausedBacklog(base: string, token: string, events: ReturnType<typeof makeEvents>, redis: Redis, prefix: string): Promise<{ records: number; routed: BacklogSize; compacted: BacklogSize }> {
  const keys = deliveryKeys(prefix, { trackerId: 'paused', destinationId: 'local' });
  let next = 0;
  await Promise.all(
    Array.from({ length: PAUSED_CONCURRENCY }, async () => {
      while (next < PAUSED_RECORDS) {
        const body = JSON.stringify(events[next++ % events.length]);
        const res = await fetch(`${base}/v3/event`, { method: 'POST', headers: { Authorization: `Tracker ${token}`, 'Content-Type': 'application/json' }, body });
        if (res.status !== 202) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
        await res.arrayBuffer();
      }
    }),
  );
  for (let i = 0; Number(await redis.get(keys.queued)) < PAUSED_RECORDS; i++) {
    if (i > 600) throw new Error('the paused backlog was not routed within a minute');
    await new Promise((r) => setTimeout(r, 100));
  }
  // The stream's own size (exact, SAMPLES 0): Redis' used_memory moves with whatever else uses it.
  const size = async (): Promise<BacklogSize> => ({ entries: await redis.xlen(keys.stream), bytesPerRecord: Number(await redis.call('MEMORY', 'USAGE', keys.stream, 'SAMPLES', '0')) / PAUSED_RECORDS });
  const routed = await size();
  let compacted = routed;
  for (let unchanged = 0, i = 0; unchanged < 6 && i < 120; i++) {
    await new Promise((r) => setTimeout(r, 500));
    const now = await size();
    unchanged = now.entries === compacted.entries ? unchanged + 1 : 0;
    compacted = now;
  }
  return { records: PAUSED_RECORDS, routed, compacted };
}

/** The single-event phase, with the run's Redis. */
async function singleEventsPhase(): Promise<void> {
  const redis = new Redis(REDIS_URL);
  try {
    await singleEvents({ redis, redisUrl: REDIS_URL, seconds: Number(process.env.BENCH_SINGLE_SECONDS ?? 10), connections: Number(process.env.BENCH_SINGLE_CONNECTIONS ?? 50), share: Number(process.env.BENCH_SINGLE_SHARE ?? 0.75), pairs: Number(process.env.BENCH_SINGLE_PAIRS ?? 3), ...(process.env.BENCH_SINGLE_RATE ? { rate: Number(process.env.BENCH_SINGLE_RATE) } : {}) });
  } finally {
    redis.disconnect();
  }
}

async function main(): Promise<void> {
  if (ONLY === 'single') {
    console.log('bench:e2e — single events only');
    return singleEventsPhase();
  }
  console.log(ONLY === 'paused' ? `bench:e2e — paused backlog only` : `bench:e2e — ${fmt(N)} events, ${BATCH} per request, ${CONCURRENCY} requests in flight${RATE > 0 ? `, paced at ${fmt(RATE)} records/s` : ', unpaced'}`);
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  const events = makeEvents(N, 7);

  const prefix = `bench-e2e-${Date.now().toString(36)}`;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'tributary-bench-e2e-'));
  const redis = new Redis(REDIS_URL);
  const token = generateToken();
  await new TrackerStore(redis, prefix).save(TrackerSchema.parse({ id: 'bench', name: 'Benchmark', tokens: [{ token }], destinations: [{ id: 'local', type: 'local' }] }));
  const pausedToken = generateToken();
  await new TrackerStore(redis, prefix).save(TrackerSchema.parse({ id: 'paused', name: 'Paused', tokens: [{ token: pausedToken }], destinations: [{ id: 'local', type: 'local', enabled: false }] }));
  const keys = deliveryKeys(prefix, { trackerId: 'bench', destinationId: 'local' });
  const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await redis.info('memory'))![1]);
  const memoryBefore = await usedMemory();

  const port = 18_000 + Math.floor(Math.random() * 2000);
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const server = spawn(process.execPath, [...serverNodeFlags('all'), ...profile, path.join(ROOT, 'dist', 'src', 'boot', 'server.js'), 'all'], {
    cwd: ROOT,
    env: { ...process.env, REDIS_URL, REDIS_PREFIX: prefix, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', DELIVERY_DISCOVER_INTERVAL_MS: '200' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (i > 300) throw new Error('server did not become ready');
    if ((await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200) break;
    await new Promise((r) => setTimeout(r, 100));
  }

  if (ONLY === 'paused') {
    const pausedStarted = performance.now();
    const paused = await pausedBacklog(base, pausedToken, events, redis, prefix);
    const pausedSeconds = (performance.now() - pausedStarted) / 1000;
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
    console.log('');
    printPaused(paused);
    console.log(`paused ingest + route  ${fmt(paused.records / pausedSeconds)} records/s (${fmt(pausedSeconds, 1)} s until every record was in the stream)`);
    await cleanUp(redis, prefix, dataDir);
    return;
  }

  const bodies: string[] = [];
  for (let i = 0; i < N; i += BATCH) bodies.push(JSON.stringify(events.slice(i, i + BATCH)));
  const acceptedAt: number[] = []; // acceptedAt[k]: when the k-th record's request was answered
  const deliveredAt: Array<[number, number]> = []; // [time, delivered count] samples
  let peakBacklog = 0;
  let peakMemory = memoryBefore;
  let sent = 0;
  const started = performance.now();

  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const [delivered, memory] = await Promise.all([redis.hget(keys.status, 'delivered'), usedMemory()]);
      const d = Number(delivered ?? 0);
      deliveredAt.push([performance.now(), d]);
      if (acceptedAt.length - d > peakBacklog) {
        peakBacklog = acceptedAt.length - d;
        peakMemory = Math.max(peakMemory, memory);
      }
      if (d >= N) break;
      await new Promise((r) => setTimeout(r, 50));
    }
  })();

  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (sent < bodies.length) {
        const index = sent++;
        const body = bodies[index]!;
        if (RATE > 0) {
          const due = started + ((index * BATCH) / RATE) * 1000;
          if (due > performance.now()) await new Promise((r) => setTimeout(r, due - performance.now()));
        }
        const res = await fetch(`${base}/v3/event`, { method: 'POST', headers: { Authorization: `Tracker ${token}`, 'Content-Type': 'application/json' }, body });
        if (res.status !== 202) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
        await res.arrayBuffer();
        const now = performance.now();
        for (let k = 0; k < BATCH; k++) acceptedAt.push(now);
      }
    }),
  );
  const ingestSeconds = (performance.now() - started) / 1000;
  await sampler;
  sampling = false;
  const totalSeconds = (deliveredAt[deliveredAt.length - 1]![0] - started) / 1000;

  // Lag of the k-th record: when the delivered count passed k, minus when it was accepted (FIFO per destination).
  const lags: number[] = [];
  let s = 0;
  for (let k = 0; k < N; k += Math.max(1, Math.floor(N / 5000))) {
    while (s < deliveredAt.length && deliveredAt[s]![1] <= k) s++;
    if (s < deliveredAt.length) lags.push(deliveredAt[s]![0] - acceptedAt[k]!);
  }
  lags.sort((a, b) => a - b);
  const status = await redis.hgetall(keys.status);
  const batches = Number(status.batches ?? 0);
  const paused = await pausedBacklog(base, pausedToken, events, redis, prefix);
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  const memoryAfter = await usedMemory();

  const direct = await baseline(events.slice(0, Math.min(N, 100_000)));
  const e2e = N / totalSeconds;
  console.log('');
  console.log(`HTTP ingest            ${fmt(N / ingestSeconds)} records/s (${fmt(ingestSeconds, 1)} s)`);
  console.log(`end to end             ${fmt(e2e)} records/s (${fmt(totalSeconds, 1)} s until the last record was in the warehouse)`);
  console.log(`delivery lag           p50 ${fmt(percentile(lags, 50))} ms, p99 ${fmt(percentile(lags, 99))} ms`);
  console.log(`destination writes     ${fmt((batches / N) * 1000, 2)} per 1 000 records (${batches} batches)`);
  console.log(`Redis memory           ${fmt((peakMemory - memoryBefore) / Math.max(1, peakBacklog))} bytes per queued record at the peak backlog of ${fmt(peakBacklog)}; ${fmt((memoryAfter - memoryBefore) / 1024)} KiB above the start once drained`);
  printPaused(paused);
  console.log(`baseline (connector)   ${fmt(direct)} records/s writing the same events directly`);
  console.log(`ratio                  ${fmt(e2e / direct, 2)}× the direct connector`);

  await cleanUp(redis, prefix, dataDir);
  console.log('');
  await singleEventsPhase();
}

function printPaused(paused: Awaited<ReturnType<typeof pausedBacklog>>): void {
  const line = (size: BacklogSize) => `${fmt(size.bytesPerRecord)} bytes of Redis per queued record (${fmt(paused.records / size.entries, 1)} records per stream entry): ${fmt(2 ** 30 / size.bytesPerRecord)} records per GiB`;
  console.log(`paused backlog         ${fmt(paused.records)} single-event requests, ${PAUSED_CONCURRENCY} in flight, to a disabled destination`);
  console.log(`  as routed            ${line(paused.routed)}`);
  console.log(`  compacted            ${line(paused.compacted)}`);
}

/** Lists the largest keys the run left (there should be none of size), then deletes them. */
async function cleanUp(redis: Redis, prefix: string, dataDir: string): Promise<void> {
  const left = await redis.keys(`${prefix}:*`);
  const sizes = await Promise.all(left.map(async (k) => [k.slice(prefix.length + 1), Number(await redis.memory('USAGE', k)) || 0] as const));
  sizes.sort((a, b) => b[1] - a[1]);
  console.log(`Redis keys left        ${left.length}: ${sizes.slice(0, 5).map(([k, b]) => `${k} ${fmt(b / 1024)} KiB`).join(', ')}`);
  for (const key of left) await redis.del(key);
  redis.disconnect();
  rmSync(dataDir, { recursive: true, force: true });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
