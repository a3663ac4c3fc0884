import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/** The machine's PostgreSQL (trust auth), as every test reaches it; PGHOST/PGPORT/PGUSER may point elsewhere. */
export const TEST_PG = {
  host: process.env.PGHOST ?? '127.0.0.1',
  port: Number(process.env.PGPORT ?? 5432),
  user: process.env.PGUSER ?? 'postgres',
};

/** Runs statements as the server's superuser, in `database` (default `postgres`). */
export async function asAdmin<T>(fn: (client: Client) => Promise<T>, database = 'postgres'): Promise<T> {
  const client = new Client({ ...TEST_PG, database });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export interface TestDatabase {
  name: string;
  /** A login role of its own, owner of nothing, with CREATE on the database: what a user would give Tributary. */
  role: string;
  /** Connection settings of the destination, as the role. */
  settings: { host: string; port: number; database: string; user: string };
  drop(): Promise<void>;
}

/**
 * A database and a login role of their own for one test file, dropped after it: tests never meet
 * in a schema, and the rights Tributary needs are the ones a least-privilege role has.
 */
export async function createTestDatabase(label: string): Promise<TestDatabase> {
  const suffix = randomBytes(4).toString('hex');
  const name = `tributary_${label}_${suffix}`;
  const role = `tributary_${label}_${suffix}_writer`;
  await asAdmin(async (c) => {
    await c.query(`CREATE ROLE "${role}" LOGIN`);
    await c.query(`CREATE DATABASE "${name}"`);
    await c.query(`GRANT CREATE, CONNECT, TEMPORARY ON DATABASE "${name}" TO "${role}"`);
  });
  return {
    name,
    role,
    settings: { host: TEST_PG.host, port: TEST_PG.port, database: name, user: role },
    async drop() {
      await asAdmin(async (c) => {
        await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
        await c.query(`DROP ROLE IF EXISTS "${role}"`);
      });
    },
  };
}
