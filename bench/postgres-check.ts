import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { generateToken } from '../src/core/trackers/tokens';
import { createTestDatabase, type TestDatabase } from '../test/helpers/postgres';
import { buildChildren } from './child';
import { makeEvents } from './events';
import { fmt } from './format';
import { destinationCounters, postRecords, psql, psqlUrl, waitForCount, type Sent } from './postgres-relay';
import { deletePrefix } from './queue-records';
import { startTributary, type BenchTracker } from './tributary-server';

/**
 * `npm run bench:postgres-check [-- --keep]`: the check a data team would run before trusting the
 * relay with its PostgreSQL. Through a running relay (`npm start`: API and workers in one process)
 * into a database of its own:
 *
 * - 100 000 events with their own `_id`, in ten rounds of 10 000; one request in five sent twice,
 *   as a client that lost the answer would;
 * - 2 000 users updated 10 times each, one round after the other: each update sets `version` and
 *   `visits`, flips `plan`; `first_seen` is set by the first only, `trial` set by the third and
 *   cleared (`null`) by the seventh;
 * - 5 000 sessions, started in round 1 and updated in rounds 5 and 10.
 *
 * Then psql, as docs/connect-postgres.md shows it: every event once (count = count distinct =
 * 100 000), every user and every session at its last state. The queries are printed with what
 * psql answered. The database is dropped after (`--keep` keeps it, and says how to open it).
 */
const { values: args } = parseArgs({ options: { keep: { type: 'boolean' } } });
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const ROUNDS = 10;
const EVENTS_A_ROUND = 10_000;
const USERS = 2_000;
const SESSIONS = 5_000;
/** Rounds that send every session: its start, then two updates. */
const SESSION_ROUNDS = [1, 5, 10];
const SCHEMA = 'shop';

function eventsOf(round: number, props: ReadonlyArray<Record<string, string | number>>): Array<Record<string, unknown>> {
  return props.map(({ _sid, _uid, ...p }, j) => {
    const n = (round - 1) * EVENTS_A_ROUND + j;
    return { ...p, _id: `evt-${n}`, _uid: `user-${n % USERS}`, _sid: `sess-${n % SESSIONS}` };
  });
}

function usersOf(round: number): Array<Record<string, unknown>> {
  return Array.from({ length: USERS }, (_, i) => ({
    _uid: `user-${i}`,
    version: round,
    visits: i * 10 + round,
    plan: round % 2 === 0 ? 'pro' : 'free',
    ...(round === 1 ? { first_seen: 'round-1' } : {}),
    ...(round === 3 ? { trial: 'yes' } : round === 7 ? { trial: null } : {}),
  }));
}

function sessionsOf(round: number): Array<Record<string, unknown>> {
  return Array.from({ length: SESSIONS }, (_, i) => ({
    _sid: `sess-${i}`,
    _uid: `user-${i % USERS}`,
    pages: round,
    ...(round === 1 ? { landing_page: '/pricing' } : {}),
    ...(round === ROUNDS ? { ended: true } : {}),
  }));
}

/** Each check: the query, and what psql must answer (unaligned, tuples only: `a|b`). */
const CHECKS = [
  {
    what: 'every event once',
    sql: `SELECT count(*) AS events, count(DISTINCT _id) AS distinct_ids, count(*) FILTER (WHERE _id !~ '^evt-[0-9]+$' OR substr(_id, 5)::int >= ${ROUNDS * EVENTS_A_ROUND}) AS unknown_ids FROM ${SCHEMA}.events`,
    expected: `${ROUNDS * EVENTS_A_ROUND}|${ROUNDS * EVENTS_A_ROUND}|0`,
  },
  {
    what: 'every user at its last state',
    sql: `SELECT count(*) AS users, count(*) FILTER (WHERE version = ${ROUNDS} AND visits = substr(_uid, 6)::int * 10 + ${ROUNDS} AND plan = 'pro' AND first_seen = 'round-1' AND trial IS NULL AND NOT _properties ? 'trial') AS at_last_state FROM ${SCHEMA}.users`,
    expected: `${USERS}|${USERS}`,
  },
  {
    what: 'every session at its last state',
    sql: `SELECT count(*) AS sessions, count(*) FILTER (WHERE pages = ${ROUNDS} AND ended AND landing_page = '/pricing' AND _uid = 'user-' || substr(_sid, 6)::int % ${USERS}) AS at_last_state FROM ${SCHEMA}.sessions`,
    expected: `${SESSIONS}|${SESSIONS}`,
  },
];

async function main(): Promise<void> {
  console.log(`# bench:postgres-check  ${new Date().toISOString()}`);
  console.log(`${fmt(ROUNDS * EVENTS_A_ROUND)} events, ${fmt(USERS)} users × ${ROUNDS} updates, ${fmt(SESSIONS)} sessions × ${SESSION_ROUNDS.length} through a running relay (npm start) into PostgreSQL\n`);
  buildChildren();
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const prefix = `bench-pg-check-${randomUUID().slice(0, 8)}`;
  let db: TestDatabase | undefined;
  let stop: (() => Promise<unknown>) | undefined;
  let failed = 0;
  try {
    db = await createTestDatabase('check');
    const tracker: BenchTracker = { id: 'shop', token: generateToken(), destinations: [{ id: 'pg', type: 'postgres', settings: { ...db.settings, schema: SCHEMA } }] };
    const relay = await startTributary({ redis, redisUrl: REDIS_URL, prefix, trackers: [tracker], processes: 1, nodeArgs: [], role: 'all' });
    stop = () => relay.stop();
    const base = `http://127.0.0.1:${relay.port}`;
    const started = performance.now();
    const totals = { events: 0, duplicates: 0, users: 0, sessions: 0 };
    const eventProps = makeEvents(ROUNDS * EVENTS_A_ROUND, 11);
    for (let round = 1; round <= ROUNDS; round++) {
      // A round's users, sessions and events at once; the next round once the relay has stored them.
      const [events, users, sessions] = await Promise.all([
        postRecords(base, tracker.token, '/v3/event', eventsOf(round, eventProps.slice((round - 1) * EVENTS_A_ROUND, round * EVENTS_A_ROUND)), { resend: (i) => i % 5 === 3 }),
        postRecords(base, tracker.token, '/v3/user', usersOf(round)),
        SESSION_ROUNDS.includes(round) ? postRecords(base, tracker.token, '/v3/session', sessionsOf(round)) : Promise.resolve<Sent>({ accepted: 0, duplicates: 0 }),
      ]);
      totals.events += events.accepted;
      totals.duplicates += events.duplicates;
      totals.users += users.accepted;
      totals.sessions += sessions.accepted;
    }
    const accepted = totals.events + totals.users + totals.sessions;
    console.log(`sent in ${fmt((performance.now() - started) / 1000, 1)} s: ${fmt(totals.events)} events accepted (${fmt(totals.duplicates)} answered as duplicates of a resent request), ${fmt(totals.users)} user and ${fmt(totals.sessions)} session updates`);
    const counters = destinationCounters(redis, prefix, tracker.id, 'pg');
    await waitForCount('every record delivered', counters.delivered, accepted, 600_000, { intervalMs: 100, failure: async () => ((await counters.paused()) ? `paused: ${await counters.paused()}` : null) });
    const dead = await counters.deadLettered();
    console.log(`delivered ${fmt(await counters.delivered())} records in ${fmt((performance.now() - started) / 1000, 1)} s from the first sent; ${dead} dead letters\n`);
    if (dead > 0) failed++;

    const url = psqlUrl(db);
    for (const check of CHECKS) {
      console.log(`-- ${check.what}: expected ${check.expected.replace('|', ', ').replace('|', ', ')}`);
      console.log(`$ psql '${url}' -c "${check.sql}"`);
      console.log(psql(url, check.sql).trimEnd());
      const answer = psql(url, check.sql, ['-At']).trim();
      const ok = answer === check.expected;
      if (!ok) failed++;
      console.log(`${ok ? 'PASS' : 'FAIL'}: ${check.what}${ok ? '' : ` (psql answered ${answer})`}\n`);
    }
    console.log(`${CHECKS.length + 1 - failed} passed, ${failed} failed`);
    if (args.keep) console.log(`\nThe database is kept: psql '${url}'  (drop it with: psql -U postgres -c 'DROP DATABASE "${db.name}" WITH (FORCE)' -c 'DROP ROLE "${db.role}"')`);
  } finally {
    await stop?.().catch((err: unknown) => console.error(err));
    if (db && !args.keep) await db.drop();
    await deletePrefix(redis, prefix);
    redis.disconnect();
  }
  if (failed > 0) process.exit(1);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
