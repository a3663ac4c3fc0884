import { Pool } from 'pg';
import type { Connector, DestinationContext, DestinationWriter } from '../types';
import { isConnectorError } from '../errors';
import { guardWrite } from '../shared/write-guard';
import { DEFAULT_BATCH_RECORDS, describeTarget, PostgresSettingsSchema, resolveSettings, type PostgresSettings, type ResolvedPostgresSettings } from './config';
import { toConnectorError } from './errors';
import { SchemaState } from './schema';
import { POSTGRES_SETUP } from './setup';
import { qualified } from './sql';
import { TABLE } from './tables';
import { writeBatch } from './write-batch';

export { PostgresSettingsSchema, type PostgresSettings } from './config';

/** A trickle is written within a quarter of a second; a backlog goes in batches of `batchRecords`. */
const BATCH_MAX_AGE_MS = 250;

/**
 * The `postgres` connector: tables `users` (one row per `_uid`), `sessions` (one row per `_sid`)
 * and `events` (one row per `_id`) in a schema of their own per tracker (`schema`, default the
 * tracker id), in a PostgreSQL database the team already runs.
 *
 * ## Columns and types
 * Every table starts with its reserved columns (`_id`, `_uid`, `_sid`, `_event`, `_event_at`,
 * `_received_at` as the resource has them; times are `timestamptz`), then `_context` and
 * `_properties` (`jsonb`: every property, for users and sessions the merged state). Then one column
 * per property, added on the fly (`ADD COLUMN IF NOT EXISTS`) and typed from its first non-null
 * value as in every destination: whole numbers `bigint`, beyond 64 bits `numeric`, other numbers
 * `double precision`, booleans `boolean`, strings `text`, objects and arrays `jsonb`. The same
 * conflict rules as the local warehouse: a fraction widens a `bigint` column to `double precision`
 * (unless it holds a whole number beyond 2^53); a value of another type leaves that cell NULL and
 * stays in `_properties`.
 *
 * ## Names
 * Property names are column names verbatim, case included (`Plan` and `plan` are two columns). A
 * name longer than 63 bytes (PostgreSQL would cut it, and two long names would meet), the empty
 * name, a name with NUL, a reserved name, and properties beyond `maxColumns` (1000; PostgreSQL
 * allows 1 600 columns, dropped ones included, which schema.ts counts) are in `_properties` only.
 * So are the cells of a row that would not fit in PostgreSQL's 8 KB a row (a thousand numbers in
 * one record: row-size.ts).
 *
 * ## Changed by hand
 * A column dropped, or added in another type, while a writer runs: the batch reads the catalog
 * again and is written at once; a column of a type Tributary does not write is left alone.
 *
 * ## Exactly once, and merges
 * One transaction per batch. Events are staged by `COPY` and inserted `ON CONFLICT (_id) DO
 * NOTHING`. Users and sessions: the batch's updates of a key are folded into one, the stored rows
 * are read and locked (`FOR UPDATE`), merged by top-level property (later values win, `null`
 * clears) and written whole. A key with no row yet is inserted `ON CONFLICT DO NOTHING`, and merged
 * again if another writer (another partition) made its row meanwhile: no update is lost.
 *
 * ## Text PostgreSQL refuses
 * A NUL character (U+0000) becomes U+FFFD in text, JSON and ids alike (a user id with NUL is one
 * row, found again by the same id); the record is stored.
 */
export const postgresConnector: Connector<PostgresSettings> = {
  type: 'postgres',
  description: 'A PostgreSQL database (your own, RDS, Cloud SQL, Supabase, Neon): users, sessions and events tables in a schema per tracker.',
  settingsSchema: PostgresSettingsSchema,
  setup: POSTGRES_SETUP,
  batch: { maxRecords: DEFAULT_BATCH_RECORDS, maxAgeMs: BATCH_MAX_AGE_MS },
  batchFor: (settings) => ({ maxRecords: settings.batchRecords ?? DEFAULT_BATCH_RECORDS, maxAgeMs: BATCH_MAX_AGE_MS }),
  // History goes in the same set-based way as live traffic, in larger transactions.
  historyBatchRecords: 10_000,
  async open(ctx) {
    return createPostgresWriter(ctx);
  },
};

function sslOption(settings: ResolvedPostgresSettings): boolean | { rejectUnauthorized: boolean; checkServerIdentity?: () => undefined } {
  switch (settings.sslmode) {
    case 'disable':
      return false;
    case 'require':
      return { rejectUnauthorized: false };
    case 'verify-ca':
      return { rejectUnauthorized: true, checkServerIdentity: () => undefined };
    case 'verify-full':
      return { rejectUnauthorized: true };
  }
}

function createPostgresWriter(ctx: DestinationContext<PostgresSettings>): DestinationWriter {
  const settings = resolveSettings(ctx.settings, ctx.trackerId);
  const target = describeTarget(settings);
  const pool = new Pool({
    host: settings.host,
    port: settings.port,
    database: settings.database,
    user: settings.user,
    ...(settings.password !== undefined ? { password: settings.password } : {}),
    ssl: sslOption(settings),
    // One batch at a time per destination; a second connection for a test while a batch runs.
    max: 2,
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 30_000,
    statement_timeout: settings.statementTimeoutMs,
    application_name: `tributary ${ctx.trackerId}/${ctx.destinationId}`,
  });
  // An idle connection the server closed (a restart) is reported here; the next batch opens another.
  pool.on('error', (err) => ctx.logger.warn({ err: err.message, destination: ctx.destinationId }, 'PostgreSQL closed an idle connection'));
  const state = new SchemaState();
  let closed = false;
  const guard = (signal: AbortSignal) => guardWrite(`the PostgreSQL writer for ${target}`, closed, signal);
  const describe = (err: unknown) => (err as Error).message ?? String(err);

  return {
    async write(records, signal) {
      guard(signal);
      if (records.length === 0) return [];
      try {
        return await writeBatch(pool, settings, state, records, describe);
      } catch (err) {
        throw isConnectorError(err) ? err : toConnectorError(target, err, settings);
      }
    },
    async test(signal) {
      guard(signal);
      const client = await pool.connect().catch((err: unknown) => {
        throw toConnectorError(target, err, settings);
      });
      // As in a batch (write-batch.ts): the server going away must fail the test, not end the process.
      let lost: Error | undefined;
      const onLost = (err: Error) => (lost = err);
      client.on('error', onLost);
      try {
        await client.query('BEGIN');
        const probe = new SchemaState();
        await probe.ensure(client, settings.schema);
        // Proves the rights a batch needs (create a stage, insert) without leaving anything.
        await client.query(`CREATE TEMP TABLE tributary_probe (x int) ON COMMIT DROP`);
        await client.query(`SELECT 1 FROM ${qualified(settings.schema, TABLE.event)} LIMIT 1`);
        const version = await client.query<{ v: string }>(`SELECT current_setting('server_version') AS v`);
        await client.query('COMMIT');
        return { notes: [`tables users, sessions and events ready in ${target} (PostgreSQL ${version.rows[0]?.v ?? 'of unknown version'})`] };
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw toConnectorError(target, err, settings);
      } finally {
        client.removeListener('error', onLost);
        client.release(lost);
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      await pool.end();
    },
  };
}
