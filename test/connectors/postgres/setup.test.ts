import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import * as z from 'zod';
import { postgresConnector } from '../../../connectors/postgres';
import { LEAST_RIGHTS_SQL } from '../../../connectors/postgres/setup';
import { createLogger } from '../../../src/core/logger';
import { asAdmin, TEST_PG } from '../../helpers/postgres';
import { event, user } from '../../helpers/record-builders';

/**
 * The console's guided setup of a postgres destination: its settings exist, its SQL is the docs'
 * word for word, and that SQL, run as written (either way it offers), gives a role that passes the
 * connector's test and writes a batch.
 */

const DOC = readFileSync(path.join(__dirname, '..', '..', '..', 'docs', 'connect-postgres.md'), 'utf8');

test('the first settings are the connection string and the schema, both settings of the schema', () => {
  const guide = postgresConnector.setup!;
  expect(guide.primary.map((p) => [p.setting, p.label])).toEqual([
    ['url', 'Connection string'],
    ['schema', 'Schema'],
  ]);
  const properties = (z.toJSONSchema(postgresConnector.settingsSchema, { io: 'input', unrepresentable: 'any' }) as { properties: Record<string, unknown> }).properties;
  for (const p of guide.primary) expect(properties).toHaveProperty(p.setting);
  expect(guide.keySetting).toBeUndefined();
});

test('the SQL of the first step is docs/connect-postgres.md’s', () => {
  const step = postgresConnector.setup!.steps.find((s) => s.code !== undefined)!;
  expect(step.code).toBe(LEAST_RIGHTS_SQL);
  expect(DOC).toContain(`\`\`\`sql\n${LEAST_RIGHTS_SQL}\n\`\`\``);
});

describe.each([
  ['lets it make its schema', (sql: string) => sql.replace(/^CREATE SCHEMA .*$/m, '')],
  ['makes the schema for it', (sql: string) => sql.replace(/^GRANT CREATE ON DATABASE .*$/m, '')],
])('the least rights, as the guide gives them: the SQL that %s', (_name, choose) => {
  const suffix = randomBytes(4).toString('hex');
  const role = `tributary_setup_${suffix}`;
  const database = `tributary_setup_${suffix}`;
  const password = `pw-${suffix}`;

  beforeAll(async () => {
    await asAdmin((c) => c.query(`CREATE DATABASE "${database}"`));
    // As a person would run it: the names and the password changed, then every statement in the database.
    const sql = choose(LEAST_RIGHTS_SQL).replace(/\btributary\b/g, `"${role}"`).replace(/\banalytics\b/g, `"${database}"`).replace('choose-one', password);
    await asAdmin((c) => c.query(sql), database);
  });

  afterAll(async () => {
    await asAdmin(async (c) => {
      await c.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
      await c.query(`DROP ROLE IF EXISTS "${role}"`);
    });
  });

  test('the connector’s test passes, and a batch is written', async () => {
    const settings = postgresConnector.settingsSchema.parse({ url: `postgres://${role}:${password}@${TEST_PG.host}:${TEST_PG.port}/${database}`, schema: 'shop' });
    const writer = await postgresConnector.open({ trackerId: 'shop', destinationId: 'pg', settings, dataDir: '/nonexistent', logger: createLogger('silent'), now: () => new Date() });
    try {
      await expect(writer.test(AbortSignal.timeout(10_000))).resolves.toEqual({ notes: [expect.stringContaining('schema shop')] });
      const outcomes = await writer.write([event('signup', { plan: 'pro' }), user('u1', { plan: 'pro' })], AbortSignal.timeout(10_000));
      expect(outcomes).toEqual([{ status: 'ok' }, { status: 'ok' }]);
    } finally {
      await writer.close();
    }
    const counts = await asAdmin((c) => c.query<{ n: string }>(`SELECT (SELECT count(*) FROM shop.events) + (SELECT count(*) FROM shop.users) AS n`), database);
    expect(counts.rows[0]!.n).toBe('2');
  });
});
