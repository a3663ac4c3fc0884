import { Client } from 'pg';
import { createDefaultRegistry } from '../../connectors';
import { postgresConnector } from '../../connectors/postgres';
import { ConnectorRegistry } from '../../connectors/registry';
import type { Connector } from '../../connectors/types';
import type { DestinationStatus } from '../../jobs/delivery/destination-status';
import { startWorkerRuntime, type WorkerRuntime } from '../../jobs/worker-runtime';
import { createLogger } from '../../src/core/logger';
import { DeliveryAdmin } from '../../src/operator/delivery-admin';
import { DestinationService } from '../../src/operator/destination-service';
import { startTestApi, type TestApi } from '../helpers/api';
import { FAST_DELIVERY } from '../helpers/fast-worker';
import type { TestDatabase } from '../helpers/postgres';
import { OwnPostgres } from '../helpers/postgres-server';
import { TEST_REDIS_URL } from '../helpers/redis';
import { tributaryProcesses } from '../helpers/tributary-process';
import { waitFor } from '../helpers/wait';

/**
 * The faults a PostgreSQL destination meets in production, through the whole pipeline (records
 * sent to /v3, routed, delivered by a worker), on a PostgreSQL cluster of the file's own: the
 * server crashed mid-stream, a worker killed inside a transaction, a statement timeout, the role's
 * rights revoked, columns changed by hand. After each, every event is stored once and every user
 * and session is at its last state, with nothing dead-lettered.
 */
jest.setTimeout(60_000);

const USERS = 5;
const SESSIONS = 4;
/** A worker in a child process, for the SIGKILL case: short leases, so the next one takes over quickly. */
const children = tributaryProcesses('pgfaults', {
  DELIVERY_LEASE_MS: '1500',
  DELIVERY_DISCOVER_INTERVAL_MS: '100',
  DELIVERY_BACKOFF_BASE_MS: '50',
  DELIVERY_BACKOFF_MAX_MS: '300',
  DELIVERY_CONFIG_RECHECK_MS: '200',
});

let pg: OwnPostgres;
let api: TestApi;
let worker: WorkerRuntime;

beforeAll(async () => {
  pg = await OwnPostgres.start();
  api = await startTestApi();
  worker = await startWorkerRuntime(api.config, TEST_REDIS_URL, new ConnectorRegistry([postgresConnector] as Connector[]), createLogger('silent'), {
    discoverIntervalMs: 50,
    leaseMs: 5000,
    delivery: { ...FAST_DELIVERY, backoff: { baseMs: 50, maxMs: 300 }, configRecheckMs: 200, writeTimeoutMs: 15_000 },
    // A small Redis cap, so that records arriving while the server is down go to the disk spool.
    spill: { capRecords: 400, frameRecords: 100, checkMs: 50 },
  });
});
afterAll(async () => {
  await worker?.close();
  await api?.close();
  await pg?.destroy();
});

/** A database and role of a case's own; they go with the cluster after the file. */
const database = (label: string) => pg.createDatabase(label);

const destination = (db: TestDatabase, settings: Record<string, unknown> = {}) => ({ id: 'pg', type: 'postgres', enabled: true, settings: { ...db.settings, schema: 'shop', ...settings } });

/** The destination's status as an operator sees it (`destinations status`, the console). */
async function statusOf(relay: TestApi, trackerId: string): Promise<DestinationStatus> {
  const destinations = new DestinationService(relay.runtime.store, createDefaultRegistry(), relay.config.dataDir, createLogger('silent'));
  const admin = new DeliveryAdmin({ destinations, trackers: relay.runtime.store, redis: relay.runtime.redis, keyspace: relay.config.keyspace, dataDir: relay.config.dataDir });
  const views = await admin.listWithStatus(trackerId);
  return views.find((v) => v.id === 'pg')!.status;
}

/**
 * Rounds of records to one tracker by HTTP: events numbered 0, 1, 2… (`n`), and each round every
 * user and every session updated to that round, so the last round is the state to end at.
 */
class Traffic {
  events = 0;
  round = -1;

  constructor(
    readonly relay: TestApi,
    readonly trackerId: string,
    private readonly token: string,
  ) {}

  private async post(path: string, body: unknown[]): Promise<void> {
    const res = await this.relay.http.post(path).set('Authorization', `Tracker ${this.token}`).send(body);
    expect(res.status).toBe(202);
  }

  async send(events = 50, extra: { event?: Record<string, unknown>; user?: Record<string, unknown> } = {}): Promise<void> {
    const round = ++this.round;
    const from = this.events;
    this.events += events;
    await this.post('/v3/event', Array.from({ length: events }, (_, i) => ({ _event: 'order', _uid: `u${i % USERS}`, n: from + i, total: 12.5, ...extra.event })));
    await this.post('/v3/user', Array.from({ length: USERS }, (_, u) => ({ _uid: `u${u}`, plan: `p${round}`, round, ...extra.user })));
    await this.post('/v3/session', Array.from({ length: SESSIONS }, (_, s) => ({ _sid: `s${s}`, _uid: `u${s % USERS}`, pages: round })));
  }
}

async function trackerWith(db: TestDatabase, settings?: Record<string, unknown>): Promise<Traffic> {
  const { tracker, token } = await api.addTracker({ destinations: [destination(db, settings)] });
  return new Traffic(api, tracker.id, token);
}

interface Counts {
  n: number;
  ids: number;
  ns: number;
}

/** Every event sent stored once, users and sessions at the last round, nothing queued or dead-lettered. */
async function expectEveryRecordOnce(db: TestDatabase, traffic: Traffic): Promise<void> {
  const last = traffic.round;
  const message = `${traffic.events} events and round ${last} in ${db.name}`;
  const counts = await waitFor(
    async () => {
      const [events] = (await pg.rows<Counts>(db.name, 'SELECT count(*)::int AS n, count(DISTINCT _id)::int AS ids, count(DISTINCT n)::int AS ns FROM shop.events')) ?? [];
      const [users] = (await pg.rows<{ last: number }>(db.name, `SELECT count(*)::int AS last FROM shop.users WHERE round = ${last}`)) ?? [];
      const [sessions] = (await pg.rows<{ last: number }>(db.name, `SELECT count(*)::int AS last FROM shop.sessions WHERE pages = ${last}`)) ?? [];
      return events && events.n >= traffic.events && users?.last === USERS && sessions?.last === SESSIONS ? events : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 100, message },
  ).catch(async (err: Error) => {
    const { lastError, deadLettered, paused, queued } = await statusOf(traffic.relay, traffic.trackerId);
    throw new Error(`${err.message}; the destination: ${JSON.stringify({ lastError, deadLettered, paused, queued })}`);
  });
  expect(counts).toEqual({ n: traffic.events, ids: traffic.events, ns: traffic.events });
  expect(await pg.rows(db.name, 'SELECT _uid, plan, round::int AS round FROM shop.users ORDER BY _uid')).toEqual(
    Array.from({ length: USERS }, (_, u) => ({ _uid: `u${u}`, plan: `p${last}`, round: last })),
  );
  expect(await pg.rows(db.name, 'SELECT _sid, _uid, pages::int AS pages FROM shop.sessions ORDER BY _sid')).toEqual(
    Array.from({ length: SESSIONS }, (_, s) => ({ _sid: `s${s}`, _uid: `u${s % USERS}`, pages: last })),
  );
  const status = await waitFor(async () => {
    const s = await statusOf(traffic.relay, traffic.trackerId);
    return s.queued === 0 && s.inFlight === 0 ? s : undefined;
  }, { message: 'nothing left queued' });
  expect(status).toMatchObject({ deadLettered: 0, paused: null });
}

/** A transaction of the superuser that holds `LOCK TABLE shop.events IN EXCLUSIVE MODE`: inserts wait, reads do not. */
async function lockEvents(db: TestDatabase): Promise<{ release: () => Promise<void> }> {
  const client = new Client({ ...pg.connection, database: db.name });
  // The server may go down under it.
  client.on('error', () => undefined);
  await client.connect();
  await client.query('BEGIN');
  await client.query('LOCK TABLE shop.events IN EXCLUSIVE MODE');
  return {
    release: async () => {
      await client.query('COMMIT').catch(() => undefined);
      await client.end().catch(() => undefined);
    },
  };
}

/** The role's backends waiting for a lock in the INSERT that follows the events' COPY. */
const waitingInserts = (db: TestDatabase) =>
  pg.rows<{ pid: number; xid: string | null }>(
    db.name,
    `SELECT pid, backend_xid::text AS xid FROM pg_stat_activity WHERE usename = '${db.role}' AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO "shop"."events"%'`,
  );

test('the server stopped (immediate) in the middle of a batch and started again: delivery resumes by itself, nothing lost or doubled', async () => {
  const db = await database('outage');
  const traffic = await trackerWith(db);
  await traffic.send(200);
  await expectEveryRecordOnce(db, traffic);

  // A batch between its COPY and its commit when the server goes down, more records on their way.
  const lock = await lockEvents(db);
  await traffic.send(200);
  await waitFor(async () => (await waitingInserts(db))?.length, { message: 'a batch inside its transaction' });
  const flowing = (async () => {
    for (let i = 0; i < 3; i++) await traffic.send(200);
  })();
  await pg.stop('immediate');
  await lock.release();
  await flowing;
  for (let i = 0; i < 3; i++) await traffic.send(200);
  const down = await waitFor(async () => {
    const s = await statusOf(api, traffic.trackerId);
    return s.lastError?.kind === 'retryable' && s.attempts >= 2 && s.spooled > 0 ? s : undefined;
  }, { timeoutMs: 20_000, message: 'retries with backoff, records in the disk spool' });
  expect(down.lastError!.message).toMatch(/PostgreSQL at .*(cannot be reached|terminat)/);
  expect(down.paused).toBeNull();

  await pg.resume();
  await traffic.send(200);
  await expectEveryRecordOnce(db, traffic);
});

test('a statement timeout (a lock held elsewhere): the batch is retried, then delivered once', async () => {
  const db = await database('timeout');
  const traffic = await trackerWith(db, { statementTimeoutMs: 200 });
  await traffic.send();
  await expectEveryRecordOnce(db, traffic);

  const lock = await lockEvents(db);
  await traffic.send();
  const timedOut = await waitFor(async () => {
    const s = await statusOf(api, traffic.trackerId);
    return s.lastError?.message.includes('statementTimeoutMs') && s.attempts >= 2 ? s : undefined;
  }, { timeoutMs: 20_000, message: 'statement timeouts, retried' });
  expect(timedOut.lastError!.kind).toBe('retryable');
  expect(timedOut.lastError!.message).toContain('canceling statement due to statement timeout');
  await lock.release();
  await traffic.send();
  await expectEveryRecordOnce(db, traffic);
});

test("the role's rights revoked, then its login: the destination pauses with what to do, nothing dead-lettered; granted again, it resumes by itself", async () => {
  const db = await database('rights');
  const traffic = await trackerWith(db);
  await traffic.send();
  await expectEveryRecordOnce(db, traffic);
  const asAdmin = (sql: string) => pg.asAdmin((c) => c.query(sql), db.name);
  const paused = (what: RegExp) =>
    waitFor(async () => {
      const s = await statusOf(api, traffic.trackerId);
      return s.paused && what.test(s.paused) ? s : undefined;
    }, { timeoutMs: 20_000, message: `paused: ${what}` });

  await asAdmin(`REVOKE INSERT, UPDATE ON ALL TABLES IN SCHEMA shop FROM "${db.role}"`);
  await traffic.send();
  const revoked = await paused(/permission denied for table/);
  expect(revoked.lastError!.kind).toBe('configuration');
  expect(revoked.paused).toMatch(/GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA/);
  expect(revoked.deadLettered).toBe(0);
  await asAdmin(`GRANT INSERT, UPDATE ON ALL TABLES IN SCHEMA shop TO "${db.role}"`);
  await expectEveryRecordOnce(db, traffic);

  await asAdmin(`ALTER ROLE "${db.role}" NOLOGIN`);
  await asAdmin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '${db.role}'`);
  await traffic.send();
  const noLogin = await paused(/not permitted to log in/);
  expect(noLogin.paused).toMatch(/refused the login.*ALTER ROLE … LOGIN/);
  expect(noLogin.deadLettered).toBe(0);
  await asAdmin(`ALTER ROLE "${db.role}" LOGIN`);
  await expectEveryRecordOnce(db, traffic);
});

test('a column added by hand in another type, one dropped by hand: delivery goes on, mismatched values stay in _properties', async () => {
  const db = await database('columns');
  const traffic = await trackerWith(db);
  // Twice: the second batch adds no column, so the writer keeps the tables' columns as it read them.
  for (let i = 0; i < 2; i++) {
    await traffic.send(50, { event: { note: 'first' }, user: { email: 'a@example.com' } });
    await expectEveryRecordOnce(db, traffic);
  }

  // Names the next records bring, made by hand in other types than theirs.
  await pg.asAdmin(async (c) => {
    await c.query('ALTER TABLE shop.events ADD COLUMN score bigint');
    await c.query('ALTER TABLE shop.users ADD COLUMN tier boolean');
  }, db.name);
  await traffic.send(50, { event: { note: 'second', score: 'high' }, user: { tier: 'gold', email: 'b@example.com' } });
  await expectEveryRecordOnce(db, traffic);
  // Columns Tributary made and fills, dropped.
  await pg.asAdmin(async (c) => {
    await c.query('ALTER TABLE shop.events DROP COLUMN note');
    await c.query('ALTER TABLE shop.users DROP COLUMN email');
  }, db.name);
  await traffic.send(50, { event: { note: 'third', score: 'high' }, user: { tier: 'gold', email: 'c@example.com' } });
  await expectEveryRecordOnce(db, traffic);

  expect(await pg.rows(db.name, "SELECT count(*)::int AS n FROM shop.events WHERE score IS NULL AND _properties->>'score' = 'high'")).toEqual([{ n: 100 }]);
  expect(await pg.rows(db.name, "SELECT count(*)::int AS n FROM shop.events WHERE note = 'third'")).toEqual([{ n: 50 }]);
  // The dropped column's values went with it; they are still in _properties.
  expect(await pg.rows(db.name, "SELECT count(*)::int AS n FROM shop.events WHERE note IS NULL AND _properties->>'note' IN ('first', 'second')")).toEqual([{ n: 150 }]);
  expect(await pg.rows(db.name, "SELECT count(*)::int AS n FROM shop.users WHERE tier IS NULL AND _properties->>'tier' = 'gold' AND email = 'c@example.com'")).toEqual([{ n: USERS }]);
});

test('a worker killed with SIGKILL between COPY and commit: the next worker writes every record once', async () => {
  const db = await database('kill');
  const other = await startTestApi({ REDIS_PREFIX: children.prefix, DATA_DIR: children.dataDir }, { destinations: [destination(db)] });
  try {
    const traffic = new Traffic(other, other.tracker.id, other.token);
    const first = children.spawn('worker');
    await traffic.send();
    await expectEveryRecordOnce(db, traffic);

    // The INSERT after the events' COPY waits for the lock: the worker is inside its transaction, users and sessions already written.
    const lock = await lockEvents(db);
    await traffic.send();
    const [waiting] = await waitFor(async () => {
      const rows = await waitingInserts(db);
      return rows?.length ? rows : undefined;
    }, { message: 'the worker waiting in its transaction, after the COPY' });
    expect(waiting!.xid).not.toBeNull();
    await first.stop('SIGKILL');

    const second = children.spawn('worker');
    // The killed worker's transaction is still open, its rows locked; the next worker waits behind it.
    await waitFor(async () => (await pg.rows(db.name, `SELECT 1 FROM pg_stat_activity WHERE usename = '${db.role}' AND pid <> ${waiting!.pid} AND wait_event_type = 'Lock'`))?.length, { timeoutMs: 20_000, message: 'the next worker waiting too' });
    expect((await pg.rows(db.name, `SELECT 1 FROM pg_stat_activity WHERE pid = ${waiting!.pid}`))?.length).toBe(1);
    await lock.release();
    await traffic.send();
    await expectEveryRecordOnce(db, traffic);
    await second.stop();
  } finally {
    await other.close();
  }
});
