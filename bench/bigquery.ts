import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { BigQuery } from '@google-cloud/bigquery';
import { PassThroughClient } from 'google-auth-library';
import { bigqueryConnector, type BigQuerySettings } from '../connectors/bigquery';
import { tableSpec } from '../connectors/bigquery/tables';
import { ConnectorRegistry } from '../connectors/registry';
import type { Connector } from '../connectors/types';
import { startWorkerRuntime } from '../jobs/worker-runtime';
import { loadConfig } from '../src/core/config';
import { createLogger } from '../src/core/logger';
import type { TrackedRecord } from '../src/core/records/types';
import { openApiRuntime } from '../src/boot/api-runtime';
import { generateToken } from '../src/core/trackers/tokens';
import { TrackerSchema } from '../src/core/trackers/types';
import { startBigQueryFake, type BigQueryFake } from '../test/fakes/bigquery';
import { makeEvents } from './events';
import { deletePrefix } from '../test/helpers/redis';
import { fmt } from './format';

/**
 * `npm run bench:bigquery [-- --events 100000 --users 2000]`
 *
 * Processes as deployed: the BigQuery fake in a child process; Tributary's API (with the load
 * generator posting to it) in another; the worker runtime in this one. In one run:
 * 1. baseline: the same event rows sent with the client's raw `table.insert` (500 rows per
 *    request, 4 in flight), the most the fake and client take;
 * 2. connector: `write()` of 2 000-record batches straight into the fake;
 * 3. end to end: HTTP POSTs (arrays of 100) → API → Redis → worker → connector → fake, timed from the
 *    first POST until the last row is in the fake; users are posted alongside to count MERGEs per flush.
 */
const { values: args } = parseArgs({ options: { events: { type: 'string' }, users: { type: 'string' }, 'serve-fake': { type: 'boolean' }, 'serve-api': { type: 'boolean' } } });
const EVENTS = Number(args.events ?? process.env.BENCH_EVENTS ?? 100_000);
const USERS = Number(args.users ?? process.env.BENCH_USERS ?? 2_000);
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PROJECT = 'bench-project';
type FakeStats = { calls: Record<string, number>; rowsInserted: number; dmlByTable: Record<string, number> };

if (args['serve-fake']) {
  void (async () => {
    const fake: BigQueryFake = await startBigQueryFake();
    process.on('message', (msg: { type: string }) => {
      if (msg.type === 'stats') process.send!({ type: 'stats', calls: { ...fake.calls }, rowsInserted: fake.stats.rowsInserted, dmlByTable: { ...fake.stats.dmlByTable } });
      if (msg.type === 'stop') void fake.close().then(() => process.exit(0));
    });
    process.send!({ type: 'listening', url: fake.url });
  })();
} else if (args['serve-api']) {
  serveApi().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
} else {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}

/** Sends `send` (if any) to a child and resolves with its next message of type `reply`. */
function request<T>(child: ChildProcess, reply: string, send?: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const on = (msg: { type: string }) => {
      if (msg.type !== reply) return;
      child.off('message', on);
      child.off('exit', onExit);
      resolve(msg as T);
    };
    const onExit = (code: number | null) => reject(new Error(`bench child exited (${code}) while waiting for ${reply}`));
    child.on('message', on);
    child.once('exit', onExit);
    if (send) child.send({ type: send });
  });
}

const per1000 = (calls: number, records: number) => fmt((calls * 1000) / records, 2);
const delta = (a: FakeStats, b: FakeStats, method: string) => (b.calls[method] ?? 0) - (a.calls[method] ?? 0);

function records(n: number, seed: number): TrackedRecord[] {
  const now = new Date().toISOString();
  return makeEvents(n, seed).map(({ _event, _uid, _sid, ...properties }) => ({ kind: 'event', id: randomUUID(), receivedAt: now, eventAt: now, event: String(_event), uid: String(_uid), sid: String(_sid), properties }));
}

async function main(): Promise<void> {
  const child = fork(__filename, ['--serve-fake'], { execArgv: process.execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const { url } = await request<{ url: string }>(child, 'listening');
  const stats = () => request<FakeStats & { type: string }>(child, 'stats', 'stats');
  const settings = (dataset: string): BigQuerySettings => bigqueryConnector.settingsSchema.parse({ projectId: PROJECT, dataset, endpoint: url });
  console.log(`# bench:bigquery  ${new Date().toISOString()}`);
  console.log(`machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? '?'}; node ${process.version}; ${fmt(EVENTS)} events of ~300 bytes (11 properties); fake in a child process`);
  try {
    // 1. Baseline: the client's raw insertAll, same rows, same request size and concurrency.
    const client = new BigQuery({ projectId: PROJECT, apiEndpoint: url, authClient: new PassThroughClient(), autoRetry: false, maxRetries: 0 });
    await client.createDataset('baseline');
    const base = await client.dataset('baseline').createTable('events', { schema: { fields: [...tableSpec('event').fields, ...Object.keys(makeEvents(1)[0]!).filter((k) => !k.startsWith('_')).map((name) => ({ name, type: typeof makeEvents(1)[0]![name] === 'number' ? 'FLOAT64' : 'STRING' }))] } });
    const rows = records(EVENTS, 7).map((r) => ({ insertId: r.id, json: { _id: r.id, _uid: r.uid, _sid: r.sid, _event: r.event, _event_at: r.eventAt, _received_at: r.receivedAt, _properties: JSON.stringify(r.properties), ...r.properties } }));
    const chunks = Array.from({ length: Math.ceil(rows.length / 500) }, (_, i) => rows.slice(i * 500, (i + 1) * 500));
    let t = performance.now();
    await Promise.all(Array.from({ length: 4 }, async () => {
      for (let c = chunks.shift(); c; c = chunks.shift()) await base[0].insert(c, { raw: true, skipInvalidRows: false, ignoreUnknownValues: false, partialRetries: 0 });
    }));
    const baseline = EVENTS / ((performance.now() - t) / 1000);
    console.log(`baseline  raw table.insert         ${fmt(baseline).padStart(8)} events/s   ${per1000(Math.ceil(EVENTS / 500), EVENTS)} insertAll / 1 000`);

    // 2. The connector alone, in its batch size.
    const writer = await bigqueryConnector.open({ trackerId: 'bench', destinationId: 'bq', settings: settings('direct'), dataDir: os.tmpdir(), logger: createLogger('silent'), now: () => new Date() });
    const direct = records(EVENTS, 8);
    const s0 = await stats();
    t = performance.now();
    for (let i = 0; i < direct.length; i += bigqueryConnector.batch.maxRecords) await writer.write(direct.slice(i, i + bigqueryConnector.batch.maxRecords), new AbortController().signal);
    const connector = EVENTS / ((performance.now() - t) / 1000);
    const s1 = await stats();
    console.log(`connector write() of ${fmt(bigqueryConnector.batch.maxRecords)}       ${fmt(connector).padStart(8)} events/s   ${per1000(delta(s0, s1, 'tabledata.insertAll'), EVENTS)} insertAll / 1 000   ratio to baseline ${fmt(connector / baseline, 2)}×`);
    await writer.close();

    // 3. End to end through the API and the worker runtime.
    await endToEnd(url, stats, baseline);
  } finally {
    child.send({ type: 'stop' });
  }
}

/**
 * The API role: Tributary's HTTP edge under the benchmark's Redis prefix, and a loader that posts
 * the prepared bodies to it (8 in flight), as a separate API process would receive them.
 */
async function serveApi(): Promise<void> {
  const config = loadConfig({ REDIS_PREFIX: process.env.BENCH_PREFIX!, LOG_LEVEL: 'warn' });
  const runtime = await openApiRuntime(config, REDIS_URL, createLogger('warn'));
  const token = generateToken();
  await runtime.store.save(TrackerSchema.parse({ id: 'bench', name: 'bench', tokens: [{ token }], destinations: [{ id: 'bq', type: 'bigquery', settings: JSON.parse(process.env.BENCH_SETTINGS!) }] }));
  const server = createServer(runtime.app.callback()).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const bodies: Array<{ path: string; body: string }> = [];
  const events = makeEvents(EVENTS, 9);
  for (let i = 0; i < events.length; i += 100) bodies.push({ path: '/v3/event', body: JSON.stringify(events.slice(i, i + 100)) });
  // Users in arrays of up to 100, spread among the events (about one array per 10 event arrays).
  const step = Math.max(1, Math.floor(bodies.length / Math.ceil(USERS / 100)));
  for (let u = 0, at = step; u < USERS; u += 100, at += step + 1) {
    const users = Array.from({ length: Math.min(100, USERS - u) }, (_, k) => ({ _uid: `user-${(u + k) % 500}`, plan: ['free', 'pro'][k % 2], seen: u + k }));
    bodies.splice(Math.min(at, bodies.length), 0, { path: '/v3/user', body: JSON.stringify(users) });
  }
  process.on('message', (msg: { type: string }) => {
    if (msg.type === 'post') {
      void (async () => {
        await Promise.all(Array.from({ length: 8 }, async () => {
          for (let b = bodies.shift(); b; b = bodies.shift()) {
            const res = await fetch(base + b.path, { method: 'POST', headers: { Authorization: `Tracker ${token}`, 'Content-Type': 'application/json' }, body: b.body });
            if (res.status !== 202) throw new Error(`POST ${b.path}: ${res.status} ${await res.text()}`);
          }
        }));
        process.send!({ type: 'posted' });
      })();
    }
    if (msg.type === 'stop') {
      server.close();
      void runtime.close().then(() => process.exit(0));
    }
  });
  process.send!({ type: 'ready' });
}

/** The worker role runs here: router, delivery loop and connector, counting flushes. */
async function endToEnd(url: string, stats: () => Promise<FakeStats>, baseline: number): Promise<void> {
  const prefix = `bench-bq-${randomUUID().slice(0, 8)}`;
  const config = loadConfig({ REDIS_PREFIX: prefix, LOG_LEVEL: 'warn', DELIVERY_DISCOVER_INTERVAL_MS: '100' });
  let flushes = 0;
  let flushesWithUsers = 0;
  let inFlight = 0;
  const failures = new Map<string, number>();
  const counting: Connector = {
    ...(bigqueryConnector as Connector),
    async open(ctx) {
      const w = await bigqueryConnector.open(ctx as Parameters<typeof bigqueryConnector.open>[0]);
      return {
        ...w,
        write: async (rs, signal) => {
          flushes++;
          inFlight++;
          if (rs.some((r) => r.kind === 'user')) flushesWithUsers++;
          try {
            return await w.write(rs, signal);
          } catch (err) {
            failures.set((err as Error).message, (failures.get((err as Error).message) ?? 0) + 1);
            throw err;
          } finally {
            inFlight--;
          }
        },
      };
    },
  };
  const api = fork(__filename, ['--serve-api'], { execArgv: process.execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: { ...process.env, BENCH_PREFIX: prefix, BENCH_SETTINGS: JSON.stringify({ projectId: PROJECT, dataset: 'e2e', endpoint: url }) } });
  await request(api, 'ready');
  const worker = await startWorkerRuntime(config, REDIS_URL, new ConnectorRegistry([counting]), createLogger('warn'));
  try {
    const s0 = await stats();
    const t = performance.now();
    const posted = request(api, 'posted', 'post').then(() => (performance.now() - t) / 1000);
    let s1 = await stats();
    while (s1.rowsInserted - s0.rowsInserted < EVENTS) {
      await new Promise((r) => setTimeout(r, 20));
      s1 = await stats();
    }
    const seconds = (performance.now() - t) / 1000;
    const accepted = await posted;
    const rate = EVENTS / seconds;
    const inserts = delta(s0, s1, 'tabledata.insertAll');
    // The last users may still be on their way: count MERGEs once no write has run for 1.5 s (maxAgeMs is 1 s).
    for (let quiet = 0; quiet < 1500; quiet = inFlight === 0 ? quiet + 50 : 0) await new Promise((r) => setTimeout(r, 50));
    s1 = await stats();
    const merges = s1.dmlByTable[`${PROJECT}:e2e.users`] ?? 0;
    console.log(`end to end HTTP → BigQuery        ${fmt(rate).padStart(8)} events/s   ${per1000(inserts, EVENTS)} insertAll / 1 000   ratio to baseline ${fmt(rate / baseline, 2)}×   (POSTs accepted in ${fmt(accepted, 2)} s, last row in after ${fmt(seconds, 2)} s)`);
    console.log(`          ${fmt(USERS)} user updates: ${merges} MERGEs into users over ${flushesWithUsers} flushes with users (${fmt(merges / Math.max(1, flushesWithUsers), 2)} per flush); ${flushes} flushes in all; jobs.query ${delta(s0, s1, 'jobs.query')}`);
    for (const [message, n] of failures) console.log(`          write failed ${n}× (retried): ${message}`);
    console.log('');
    const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
    console.log(`targets: ≥ 10 000 events/s end to end: ${met(rate >= 10_000)}; ≤ 3 insertAll per 1 000 events: ${met((inserts * 1000) / EVENTS <= 3)}; ≤ 1 MERGE per table per flush: ${met(merges <= flushesWithUsers)}`);
  } finally {
    api.send({ type: 'stop' });
    await worker.close();
    await deletePrefix(prefix, REDIS_URL);
  }
}
