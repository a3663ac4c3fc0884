import { createServer, type Server } from 'node:net';
import { ConnectorError } from '../../../connectors/errors';
import { postgresConnector, type PostgresSettings } from '../../../connectors/postgres';
import { createLogger } from '../../../src/core/logger';
import { asAdmin, createTestDatabase, TEST_PG, type TestDatabase } from '../../helpers/postgres';

/**
 * `destinations test` (and the console's Test before save) runs the connector's `test()`: each
 * failure says what is wrong and what to do, and its kind says what delivery would do.
 */
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('conntest');
});
afterAll(async () => {
  await db.drop();
});

interface Outcome {
  ok: boolean;
  kind?: string;
  message: string;
}

async function runTest(settings: Partial<PostgresSettings> & Record<string, unknown>): Promise<Outcome> {
  const parsed = postgresConnector.settingsSchema.parse({ ...db.settings, ...settings });
  const writer = await postgresConnector.open({ trackerId: 'shop-eu', destinationId: 'pg', settings: parsed, dataDir: '/nonexistent', logger: createLogger('silent'), now: () => new Date() });
  try {
    const report = await writer.test(AbortSignal.timeout(15_000));
    return { ok: true, message: report?.notes.join('\n') ?? '' };
  } catch (err) {
    if (!(err instanceof ConnectorError)) throw err;
    return { ok: false, kind: err.kind, message: err.message };
  } finally {
    await writer.close();
  }
}

/** A port nothing listens on: one the system gave a server that is closed again. */
async function closedPort(): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

test('success: says where the tables are, in which schema (the tracker id by default)', async () => {
  const result = await runTest({});
  expect(result).toEqual({ ok: true, message: expect.stringContaining(`users, sessions and events`) });
  expect(result.message).toContain(`${db.role}@${TEST_PG.host}:${TEST_PG.port}/${db.name}, schema shop_eu (PostgreSQL 1`);
  const tables = await asAdmin((c) => c.query<{ t: string }>(`SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'shop_eu' ORDER BY 1`), db.name);
  expect(tables.rows.map((r) => r.t)).toEqual(['events', 'sessions', 'users']);
  // Again: nothing to make, still fine.
  expect((await runTest({})).ok).toBe(true);
});

test('nothing listens at host:port: retryable, naming host and port, with what to check', async () => {
  const port = await closedPort();
  const result = await runTest({ host: '127.0.0.1', port });
  expect(result).toMatchObject({ ok: false, kind: 'retryable' });
  expect(result.message).toContain(`127.0.0.1:${port}`);
  expect(result.message).toMatch(/cannot be reached/);
  expect(result.message).toMatch(/check host and port/);
});

test('a host name DNS does not know: configuration, naming the host', async () => {
  const result = await runTest({ host: 'no-such-host.invalid' });
  expect(result).toMatchObject({ ok: false, kind: 'configuration' });
  expect(result.message).toContain('no-such-host.invalid');
  expect(result.message).toMatch(/not known to DNS.*Check host/);
});

test('a role that does not exist (28000): configuration, naming the user and how to make it', async () => {
  const result = await runTest({ user: 'nobody_here' });
  expect(result).toMatchObject({ ok: false, kind: 'configuration' });
  expect(result.message).toContain('role "nobody_here" does not exist');
  expect(result.message).toContain(`CREATE ROLE "nobody_here" LOGIN PASSWORD '…'`);
});

test('a database that does not exist (3D000): configuration, naming it and how to make it', async () => {
  const result = await runTest({ database: 'no_such_db' });
  expect(result).toMatchObject({ ok: false, kind: 'configuration' });
  expect(result.message).toContain('database "no_such_db" does not exist');
  expect(result.message).toContain('CREATE DATABASE "no_such_db"');
});

test('no CREATE on the database for a schema not made yet (42501): configuration, with the GRANT to run', async () => {
  await asAdmin((c) => c.query(`REVOKE CREATE ON DATABASE "${db.name}" FROM "${db.role}"`));
  try {
    const result = await runTest({ schema: 'not_yet' });
    expect(result).toMatchObject({ ok: false, kind: 'configuration' });
    expect(result.message).toContain(`permission denied for database ${db.name}`);
    expect(result.message).toContain(`GRANT CREATE ON DATABASE "${db.name}" TO "${db.role}"`);
    expect(result.message).toContain(`CREATE SCHEMA "not_yet" AUTHORIZATION "${db.role}"`);
  } finally {
    await asAdmin((c) => c.query(`GRANT CREATE ON DATABASE "${db.name}" TO "${db.role}"`));
  }
});

test('a schema made by someone else without rights for the role (42501): configuration, with the GRANT to run', async () => {
  await asAdmin((c) => c.query(`CREATE SCHEMA theirs`), db.name);
  const result = await runTest({ schema: 'theirs' });
  expect(result).toMatchObject({ ok: false, kind: 'configuration' });
  expect(result.message).toContain('permission denied for schema theirs');
  expect(result.message).toContain(`GRANT USAGE, CREATE ON SCHEMA "theirs" TO "${db.role}"`);
});

test('no right to make temporary tables (42501): configuration, with the GRANT to run', async () => {
  await asAdmin((c) => c.query(`REVOKE TEMPORARY ON DATABASE "${db.name}" FROM "${db.role}", PUBLIC`));
  try {
    const result = await runTest({ schema: 'temp_rights' });
    expect(result).toMatchObject({ ok: false, kind: 'configuration' });
    expect(result.message).toContain('permission denied to create temporary tables');
    expect(result.message).toContain(`GRANT TEMPORARY ON DATABASE "${db.name}" TO "${db.role}"`);
  } finally {
    await asAdmin((c) => c.query(`GRANT TEMPORARY ON DATABASE "${db.name}" TO "${db.role}", PUBLIC`));
  }
});

test('TLS asked of a server without it: configuration, saying which setting to change', async () => {
  const ssl = await asAdmin((c) => c.query<{ ssl: string }>('SHOW ssl'));
  const result = await runTest({ sslmode: 'require' });
  if (ssl.rows[0]!.ssl === 'on') return expect(result.ok).toBe(true);
  expect(result).toMatchObject({ ok: false, kind: 'configuration' });
  expect(result.message).toMatch(/sslmode/);
});
