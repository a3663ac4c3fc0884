import type { Pool } from 'pg';
import type { TrackedRecord } from '../../src/core/records/types';
import type { RecordOutcome } from '../types';
import { coalesceUpserts } from '../shared/coalesce-upserts';
import { writeIsolatingDataErrors } from '../shared/isolate-data-errors';
import type { ResolvedPostgresSettings } from './config';
import type { SchemaState } from './schema';
import { writeEvents } from './write-events';
import { writeUpserts } from './write-upserts';

/** SQLSTATE classes 22 (a value the type refuses) and 23 (a constraint): the records' fault, not the batch's. */
export const isDataError = (err: unknown): boolean => /^2[23]/.test(String((err as { code?: unknown } | null)?.code ?? ''));

/** Writes records of all three kinds in one transaction on one connection: all of them, or none. */
async function applyAll(pool: Pool, settings: ResolvedPostgresSettings, state: SchemaState, records: readonly TrackedRecord[]): Promise<void> {
  const client = await pool.connect();
  let broken: unknown;
  try {
    await client.query('BEGIN');
    const target = { client, schema: settings.schema, state, maxColumns: settings.maxColumns };
    await state.ensure(client, settings.schema);
    const users = records.filter((r) => r.kind === 'user');
    const sessions = records.filter((r) => r.kind === 'session');
    const events = records.filter((r) => r.kind === 'event');
    if (users.length > 0) await writeUpserts(target, 'user', coalesceUpserts('user', users).changes);
    if (sessions.length > 0) await writeUpserts(target, 'session', coalesceUpserts('session', sessions).changes);
    if (events.length > 0) await writeEvents(target, events);
    await client.query('COMMIT');
  } catch (err) {
    // What this transaction made (tables, columns) is gone with it: read the catalog again next time.
    state.forget();
    await client.query('ROLLBACK').catch((rollback: unknown) => (broken = rollback));
    throw err;
  } finally {
    // A connection whose rollback failed is not given to the next batch.
    client.release(broken as Error | undefined);
  }
}

/** One batch, one transaction; a value the database refuses is isolated to its record (connectors/shared/isolate-data-errors.ts). */
export function writeBatch(pool: Pool, settings: ResolvedPostgresSettings, state: SchemaState, records: readonly TrackedRecord[], describe: (err: unknown) => string): Promise<RecordOutcome[]> {
  return writeIsolatingDataErrors({ apply: (batch) => applyAll(pool, settings, state, batch), isDataError, refused: (err) => `PostgreSQL refused this record: ${describe(err)}` }, records);
}
