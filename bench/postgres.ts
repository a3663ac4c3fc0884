import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { TrackerStore } from '../src/core/trackers/store';
import { generateToken } from '../src/core/trackers/tokens';
import { createTestDatabase, type TestDatabase } from '../test/helpers/postgres';
import { buildChildren, compiledPath, serverNodeFlags, stopChild } from './child';
import { makeEvents } from './events';
import { fmt } from './format';
import { destinationCounters, postgresCpuSeconds, postRecords, waitForCount } from './postgres-relay';
import { machineCpuSeconds, mainThreadCpuSeconds, processCpuSeconds } from './proc-stats';
import { deletePrefix } from './queue-records';
import { startTributary, type BenchTracker } from './tributary-server';

/**
 * `npm run bench:postgres [-- --events 200000 --users 25000 --rounds 4]`
 *
 * Records a second that one worker (`npm run start:worker`) delivers into PostgreSQL, for events
 * and for upserts, with the worker's CPU a record, beside two baselines of the same run:
 *
 * - the same records, the same worker, into the **local warehouse** (DuckDB), the destination the
 *   project's other delivery figures use (bench:cpu, bench:scale);
 * - the **floor**: the rows PostgreSQL ended up with, written again by plain SQL from this process
 *   with nothing of Tributary: events by a bare `COPY` into a table of the same columns and keys,
 *   users by `COPY` into a temporary stage and `INSERT … ON CONFLICT DO UPDATE`, 5 000 rows a
 *   transaction (the connector's batch): what the server itself takes.
 *
 * Two phases, as bench:scale: the API takes the records (events to one tracker; `users` distinct
 * users updated `rounds` times, round after round, to another) and a worker routes them to the
 * trackers' destinations, all disabled; then, for each destination in turn, a fresh worker and the
 * destination enabled: records a second from enabling to the last delivered, and from the first
 * batch's commit on (the steady rate), the worker's CPU and PostgreSQL's (every `postgres`
 * process) a record, from /proc. Each run has a database and a least-rights role of its own
 * (test/helpers/postgres.ts), dropped after. `BENCH_CPU_PROF=DIR`: each measuring worker writes a
 * V8 CPU profile there as it stops.
 */
const { values: args } = parseArgs({ options: { events: { type: 'string' }, users: { type: 'string' }, rounds: { type: 'string' }, keep: { type: 'boolean' } } });
const EVENTS = Number(args.events ?? process.env.BENCH_PG_EVENTS ?? 200_000);
const USERS = Number(args.users ?? process.env.BENCH_PG_USERS ?? 25_000);
const ROUNDS = Number(args.rounds ?? process.env.BENCH_PG_ROUNDS ?? 4);
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** The goals, one worker on this machine. */
const GOALS = { eventsPerSecond: 20_000, upsertsPerSecond: 5_000 } as const;
/** The connector's default batchRecords: the floor writes as many rows a transaction. */
const BATCH_ROWS = 5000;

const PLANS = ['free', 'pro', 'team'];
const COUNTRIES = ['FR', 'DE', 'US', 'GB', 'JP', 'BR', 'IN'];
const PAGES = ['/', '/pricing', '/docs/getting-started', '/account/settings', '/cart'];

/** Round `round` of the user updates: every user once, ~250 bytes each, changing values. */
function userRound(round: number): Array<Record<string, unknown>> {
  return Array.from({ length: USERS }, (_, i) => ({
    _uid: `user-${i}`,
    email: `user${i}@example.com`,
    plan: PLANS[(i + round) % PLANS.length],
    country: COUNTRIES[i % COUNTRIES.length],
    visits: round * 3 + (i % 7),
    last_page: PAGES[(i + round) % PAGES.length],
    ltv: Math.round(((i * 37 + round * 101) % 100_000)) / 100,
    newsletter: (i + round) % 2 === 0,
    last_seen_at: new Date(Date.UTC(2026, 0, 1) + round * 86_400_000 + i * 1000).toISOString(),
  }));
}

interface Run {
  label: string;
  records: number;
  /** From enabling the destination to its last record delivered. */
  perSecond: number;
  /** From the first batch delivered to the last: without the worker opening the destination. */
  steadyPerSecond: number;
  workerUs: number;
  workerMainUs: number;
  postgresUs: number;
  machineUs: number;
}

const profileArgs = (): string[] => (process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []);

async function main(): Promise<void> {
  const cpus = os.cpus();
  console.log(`# bench:postgres  ${new Date().toISOString()}  ${cpus.length} × ${cpus[0]?.model ?? '?'}, node ${process.version}`);
  console.log(`${fmt(EVENTS)} events (~300 bytes, 11 properties); ${fmt(USERS)} users × ${ROUNDS} rounds = ${fmt(USERS * ROUNDS)} upserts (9 properties); one worker; CPU from /proc\n`);
  buildChildren();
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const prefix = `bench-pg-${randomUUID().slice(0, 8)}`;
  const closers: Array<() => Promise<unknown>> = [];
  let db: TestDatabase | undefined;
  try {
    db = await createTestDatabase('bench');
    const database = db;
    closers.push(async () => (args.keep ? console.log(`database kept: ${database.name}`) : database.drop()));
    const pg = { id: 'pg', type: 'postgres', enabled: false, settings: { ...db.settings } };
    const wh = { id: 'wh', type: 'local', enabled: false };
    const ev: BenchTracker = { id: 'ev', token: generateToken(), destinations: [pg, wh], settings: { archiveDays: 0 } };
    const up: BenchTracker = { id: 'up', token: generateToken(), destinations: [pg, wh], settings: { archiveDays: 0 } };
    // Every record stays in Redis until delivered: no disk spool in the measurement.
    const env = { DELIVERY_DISCOVER_INTERVAL_MS: '100', DESTINATION_REDIS_CAP_RECORDS: '100000000' };
    const server = await startTributary({ redis, redisUrl: REDIS_URL, prefix, trackers: [ev, up], processes: 1, nodeArgs: [], env });
    closers.push(() => server.stop());
    const store = new TrackerStore(redis, prefix);
    const worker = (nodeArgs: string[] = []): ChildProcess =>
      spawn(process.execPath, [...serverNodeFlags('worker'), ...nodeArgs, compiledPath('src/boot/server.ts'), 'worker'], {
        env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn', REDIS_URL, REDIS_PREFIX: prefix, DATA_DIR: server.dataDir, TRIBUTARY_CONFIG: '', ...env },
        stdio: ['ignore', 'inherit', 'inherit'],
      });

    // Phase 1: the records in, routed to the disabled destinations.
    const router = worker();
    const base = `http://127.0.0.1:${server.port}`;
    const started = performance.now();
    const events = await postRecords(base, ev.token, '/v3/event', makeEvents(EVENTS, 7));
    let upserts = 0;
    for (let round = 1; round <= ROUNDS; round++) upserts += (await postRecords(base, up.token, '/v3/user', userRound(round))).accepted;
    for (const [t, n] of [[ev, events.accepted], [up, upserts]] as const) {
      for (const d of ['pg', 'wh']) await waitForCount(`${t.id}/${d} routed`, destinationCounters(redis, prefix, t.id, d).queued, n, 600_000);
    }
    router.kill('SIGTERM');
    await stopChild(router, 30_000);
    console.log(`in and routed: ${fmt(events.accepted)} events, ${fmt(upserts)} user updates, in ${fmt((performance.now() - started) / 1000, 1)} s\n`);

    // Phase 2: each destination alone, with a worker of its own.
    const deliver = async (t: BenchTracker, destinationId: string, records: number, label: string): Promise<Run> => {
      const w = worker(profileArgs());
      closers.push(() => stopChild(w, 30_000));
      try {
        // Started and connected before the clock starts; it finds nothing enabled meanwhile.
        await new Promise((r) => setTimeout(r, 2500));
        const counters = destinationCounters(redis, prefix, t.id, destinationId);
        const cpu0 = { worker: processCpuSeconds(w.pid), main: mainThreadCpuSeconds(w.pid), postgres: postgresCpuSeconds(), machine: machineCpuSeconds() };
        const t0 = performance.now();
        await store.update(t.id, (c) => ({ ...c, destinations: c.destinations.map((d) => (d.id === destinationId ? { ...d, enabled: true } : d)) }));
        let first: { at: number; delivered: number } | undefined;
        await waitForCount(
          `${label} delivered`,
          async () => {
            const n = await counters.delivered();
            if (first === undefined && n > 0) first = { at: performance.now(), delivered: n };
            return n;
          },
          records,
          900_000,
          { intervalMs: 20, failure: async () => ((await counters.paused()) ? `paused: ${await counters.paused()}` : null) },
        );
        const t1 = performance.now();
        const cpu1 = { worker: processCpuSeconds(w.pid), main: mainThreadCpuSeconds(w.pid), postgres: postgresCpuSeconds(), machine: machineCpuSeconds() };
        await store.update(t.id, (c) => ({ ...c, destinations: c.destinations.map((d) => (d.id === destinationId ? { ...d, enabled: false } : d)) }));
        const dead = await counters.deadLettered();
        if (dead > 0) throw new Error(`${label}: ${dead} dead letters (${await counters.lastError()})`);
        const us = (seconds: number) => (seconds * 1e6) / records;
        return {
          label,
          records,
          perSecond: records / ((t1 - t0) / 1000),
          steadyPerSecond: first && t1 > first.at ? (records - first.delivered) / ((t1 - first.at) / 1000) : Number.NaN,
          workerUs: us(cpu1.worker - cpu0.worker),
          workerMainUs: us(cpu1.main - cpu0.main),
          postgresUs: us(cpu1.postgres - cpu0.postgres),
          machineUs: us(cpu1.machine - cpu0.machine),
        };
      } finally {
        w.kill('SIGTERM');
        await stopChild(w, 30_000);
      }
    };

    const runs = {
      eventsPg: await deliver(ev, 'pg', events.accepted, 'events → PostgreSQL'),
      eventsWh: await deliver(ev, 'wh', events.accepted, 'events → local warehouse'),
      upsertsPg: await deliver(up, 'pg', upserts, 'upserts → PostgreSQL'),
      upsertsWh: await deliver(up, 'wh', upserts, 'upserts → local warehouse'),
    };
    await checkStored(db, events.accepted, USERS);
    const floor = await floors(db, ROUNDS);
    print(runs, floor);
  } finally {
    for (const close of closers.reverse()) await close().catch((err: unknown) => console.error(err));
    await deletePrefix(redis, prefix);
    redis.disconnect();
  }
}

/** What the PostgreSQL runs left: every event once, every user once. */
async function checkStored(db: TestDatabase, events: number, users: number): Promise<void> {
  const client = new Client(db.settings);
  await client.connect();
  try {
    const { rows } = await client.query<{ e: string; d: string; u: string }>('SELECT (SELECT count(*) FROM ev.events) AS e, (SELECT count(DISTINCT _id) FROM ev.events) AS d, (SELECT count(*) FROM up.users) AS u');
    const r = rows[0]!;
    if (Number(r.e) !== events || Number(r.d) !== events || Number(r.u) !== users) throw new Error(`PostgreSQL holds ${r.e} events (${r.d} distinct) and ${r.u} users; expected ${events} and ${users}`);
  } finally {
    await client.end();
  }
}

interface Floor {
  eventsPerSecond: number;
  eventsPostgresUs: number;
  upsertsPerSecond: number;
  upsertsPostgresUs: number;
}

/** The table's rows as COPY text, one string a row. */
async function dump(client: Client, table: string): Promise<string[]> {
  const chunks: Buffer[] = [];
  const stream = client.query(copyTo(`COPY ${table} TO STDOUT`));
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  // In COPY's text format a newline inside a value is written \n: each line is one row.
  return Buffer.concat(chunks).toString('utf8').split('\n').filter(Boolean);
}

async function copyIn(client: Client, sql: string, rows: readonly string[]): Promise<void> {
  await pipeline(Readable.from([`${rows.join('\n')}\n`]), client.query(copyFrom(sql)));
}

/** The same rows, written by plain SQL in transactions of BATCH_ROWS: what PostgreSQL itself takes. */
async function floors(db: TestDatabase, rounds: number): Promise<Floor> {
  const client = new Client(db.settings);
  await client.connect();
  try {
    await client.query('CREATE SCHEMA floor; CREATE TABLE floor.events (LIKE ev.events INCLUDING ALL); CREATE TABLE floor.users (LIKE up.users INCLUDING ALL)');
    const timed = async (fn: () => Promise<void>): Promise<{ seconds: number; postgres: number }> => {
      const [t0, p0] = [performance.now(), postgresCpuSeconds()];
      await fn();
      return { seconds: (performance.now() - t0) / 1000, postgres: postgresCpuSeconds() - p0 };
    };
    const events = await dump(client, 'ev.events');
    const e = await timed(async () => {
      for (let i = 0; i < events.length; i += BATCH_ROWS) {
        await client.query('BEGIN');
        await copyIn(client, 'COPY floor.events FROM STDIN', events.slice(i, i + BATCH_ROWS));
        await client.query('COMMIT');
      }
    });
    const users = await dump(client, 'up.users');
    const { rows: cols } = await client.query<{ c: string }>(`SELECT quote_ident(column_name) AS c FROM information_schema.columns WHERE table_schema = 'up' AND table_name = 'users' AND column_name <> '_uid'`);
    const set = cols.map(({ c }) => `${c} = excluded.${c}`).join(', ');
    const u = await timed(async () => {
      for (let round = 0; round < rounds; round++) {
        for (let i = 0; i < users.length; i += BATCH_ROWS) {
          await client.query('BEGIN');
          await client.query('CREATE TEMP TABLE stage (LIKE floor.users) ON COMMIT DROP');
          await copyIn(client, 'COPY stage FROM STDIN', users.slice(i, i + BATCH_ROWS));
          await client.query(`INSERT INTO floor.users SELECT * FROM stage ON CONFLICT (_uid) DO UPDATE SET ${set}`);
          await client.query('COMMIT');
        }
      }
    });
    const upserts = users.length * rounds;
    return { eventsPerSecond: events.length / e.seconds, eventsPostgresUs: (e.postgres * 1e6) / events.length, upsertsPerSecond: upserts / u.seconds, upsertsPostgresUs: (u.postgres * 1e6) / upserts };
  } finally {
    await client.end();
  }
}

function print(runs: Record<'eventsPg' | 'eventsWh' | 'upsertsPg' | 'upsertsWh', Run>, floor: Floor): void {
  const line = (r: Run) =>
    `  ${r.label.padEnd(26)} ${fmt(r.perSecond).padStart(7)} records/s (steady ${fmt(r.steadyPerSecond).padStart(7)}/s)  worker ${fmt(r.workerUs, 1).padStart(5)} µs of CPU a record (${fmt(r.workerMainUs, 1)} on its main thread)  PostgreSQL ${fmt(r.postgresUs, 1).padStart(5)} µs  machine ${fmt(r.machineUs, 1)} µs`;
  const verdict = (ok: boolean) => (ok ? 'met' : 'not met');
  console.log(`events (${fmt(runs.eventsPg.records)})`);
  console.log(line(runs.eventsPg));
  console.log(line(runs.eventsWh));
  console.log(`  floor: bare COPY, ${fmt(BATCH_ROWS)} rows a transaction  ${fmt(floor.eventsPerSecond).padStart(7)} rows/s, PostgreSQL ${fmt(floor.eventsPostgresUs, 1)} µs a row`);
  console.log(`  PostgreSQL ÷ local warehouse ${fmt(runs.eventsPg.perSecond / runs.eventsWh.perSecond, 2)}×; ÷ floor ${fmt(runs.eventsPg.perSecond / floor.eventsPerSecond, 2)}×`);
  console.log(`  goal ≥ ${fmt(GOALS.eventsPerSecond)} events/s: ${verdict(runs.eventsPg.perSecond >= GOALS.eventsPerSecond)} (${fmt(runs.eventsPg.perSecond)})\n`);
  console.log(`upserts (${fmt(runs.upsertsPg.records)}: ${fmt(USERS)} users, ${ROUNDS} rounds)`);
  console.log(line(runs.upsertsPg));
  console.log(line(runs.upsertsWh));
  console.log(`  floor: COPY to a stage + INSERT … ON CONFLICT DO UPDATE, ${fmt(BATCH_ROWS)} rows a transaction  ${fmt(floor.upsertsPerSecond).padStart(7)} rows/s, PostgreSQL ${fmt(floor.upsertsPostgresUs, 1)} µs a row`);
  console.log(`  PostgreSQL ÷ local warehouse ${fmt(runs.upsertsPg.perSecond / runs.upsertsWh.perSecond, 2)}×; ÷ floor ${fmt(runs.upsertsPg.perSecond / floor.upsertsPerSecond, 2)}×`);
  console.log(`  goal ≥ ${fmt(GOALS.upsertsPerSecond)} upserts/s: ${verdict(runs.upsertsPg.perSecond >= GOALS.upsertsPerSecond)} (${fmt(runs.upsertsPg.perSecond)})`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
