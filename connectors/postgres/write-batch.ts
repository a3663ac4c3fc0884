import type { Pool } from 'pg';
import type { TrackedRecord } from '../../src/core/records/types';
import type { RecordOutcome } from '../types';
import { coalesceUpserts } from '../shared/coalesce-upserts';
import { writeIsolatingDataErrors } from '../shared/isolate-data-errors';
import type { ResolvedPostgresSettings } from './config';
import { storableText } from './copy-text';
import type { SchemaState } from './schema';
import { writeEvents } from './write-events';
import { writeUpserts } from './write-upserts';

/** SQLSTATE classes 22 (a value the type refuses) and 23 (a constraint): the records' fault, not the batch's. */
export const isDataError = (err: unknown): boolean => /^2[23]/.test(String((err as { code?: unknown } | null)?.code ?? ''));

/**
 * The tables are not what the writer knew of them: a table or schema dropped (42P01, 3F000), a
 * column dropped (42703), or one added by hand, or by another partition's writer, in a type other
 * than the one this batch stages (42804); or another writer made the same schema or table at the
 * same moment (23505 on a catalog's index: `IF NOT EXISTS` does not wait for the other's commit).
 * The catalog is read again (SchemaState.forget) and the batch tried once more at once.
 */
function isSchemaDrift(err: unknown): boolean {
  const { code, constraint } = (err ?? {}) as { code?: unknown; constraint?: unknown };
  return ['42P01', '3F000', '42703', '42804'].includes(String(code)) || (code === '23505' && String(constraint).startsWith('pg_'));
}

/**
 * A user or session id with a NUL character: COPY stores it with U+FFFD (copy-text.ts), and the
 * lookup of the stored row must use the same text, which PostgreSQL also refuses NUL in.
 */
function storableKeys(record: TrackedRecord): TrackedRecord {
  const uid = record.uid !== undefined ? storableText(record.uid) : undefined;
  const sid = record.sid !== undefined ? storableText(record.sid) : undefined;
  return uid === record.uid && sid === record.sid ? record : { ...record, ...(uid !== undefined && { uid }), ...(sid !== undefined && { sid }) };
}

/** Writes records of all three kinds in one transaction on one connection: all of them, or none. */
async function applyAll(pool: Pool, settings: ResolvedPostgresSettings, state: SchemaState, records: readonly TrackedRecord[]): Promise<void> {
  const client = await pool.connect();
  let broken: unknown;
  // A checked-out client whose server goes away emits 'error' besides failing its query; unheard,
  // that event would end the worker. The connection is then not given to the next batch.
  const lost = (err: Error) => (broken = err);
  client.on('error', lost);
  try {
    await client.query('BEGIN');
    const target = { client, schema: settings.schema, state, maxColumns: settings.maxColumns };
    await state.ensure(client, settings.schema);
    const users = records.filter((r) => r.kind === 'user').map(storableKeys);
    const sessions = records.filter((r) => r.kind === 'session').map(storableKeys);
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
    client.removeListener('error', lost);
    client.release(broken as Error | undefined);
  }
}

/** {@link applyAll}, once more when the tables changed under the writer. */
async function applyFresh(pool: Pool, settings: ResolvedPostgresSettings, state: SchemaState, records: readonly TrackedRecord[]): Promise<void> {
  try {
    await applyAll(pool, settings, state, records);
  } catch (err) {
    if (!isSchemaDrift(err)) throw err;
    await applyAll(pool, settings, state, records);
  }
}

/** One batch, one transaction; a value the database refuses is isolated to its record (connectors/shared/isolate-data-errors.ts). */
export function writeBatch(pool: Pool, settings: ResolvedPostgresSettings, state: SchemaState, records: readonly TrackedRecord[], describe: (err: unknown) => string): Promise<RecordOutcome[]> {
  return writeIsolatingDataErrors({ apply: (batch) => applyFresh(pool, settings, state, batch), isDataError, refused: (err) => `PostgreSQL refused this record: ${describe(err)}` }, records);
}
