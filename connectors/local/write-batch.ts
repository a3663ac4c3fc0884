import type { DuckDBConnection } from '@duckdb/node-api';
import type { TrackedRecord } from '../../src/core/records/types';
import { PermanentError } from '../errors';
import type { RecordOutcome } from '../types';
import { missingKeyError } from '../shared/batch-records';
import { coalesceUpserts } from '../shared/coalesce-upserts';
import { errorMessage, isDataError } from './duckdb-errors';
import { writeEvents } from './write-events';
import { writeUpserts } from './write-upserts';

const OK: RecordOutcome = { status: 'ok' };

const failed = (message: string, cause?: unknown): RecordOutcome => ({ status: 'failed', error: new PermanentError(message, { cause }) });

/** A user or session without its key can never be written. The database refuses the subtler cases itself. */
function unwritable(record: TrackedRecord): RecordOutcome | undefined {
  if (record.kind === 'user' && !record.uid) return { status: 'failed', error: missingKeyError('user') };
  if (record.kind === 'session' && !record.sid) return { status: 'failed', error: missingKeyError('session') };
  return undefined;
}

/** Writes records of all three kinds in one transaction: all of them, or (on any error) none. */
async function applyAll(conn: DuckDBConnection, records: readonly TrackedRecord[], maxColumns: number): Promise<void> {
  const users = records.filter((r) => r.kind === 'user');
  const sessions = records.filter((r) => r.kind === 'session');
  const events = records.filter((r) => r.kind === 'event');
  await conn.run('BEGIN TRANSACTION');
  try {
    if (users.length > 0) await writeUpserts(conn, 'user', coalesceUpserts('user', users).changes, maxColumns);
    if (sessions.length > 0) await writeUpserts(conn, 'session', coalesceUpserts('session', sessions).changes, maxColumns);
    if (events.length > 0) await writeEvents(conn, events, maxColumns);
    await conn.run('COMMIT');
  } catch (err) {
    await conn.run('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/**
 * Writes one batch and returns an outcome per record, in order. The batch is one transaction;
 * when the database refuses it for a data error, the records are written again one by one (each
 * its own transaction, still in order) to find the culprits, which fail permanently while the rest
 * succeed. Any other error is thrown: it concerns the whole batch.
 */
export async function writeBatch(conn: DuckDBConnection, records: readonly TrackedRecord[], maxColumns: number): Promise<RecordOutcome[]> {
  const outcomes: RecordOutcome[] = records.map((r) => unwritable(r) ?? OK);
  const writable = records.filter((_, i) => outcomes[i] === OK);
  try {
    await applyAll(conn, writable, maxColumns);
    return outcomes;
  } catch (err) {
    if (!isDataError(err)) throw err;
  }
  for (let i = 0; i < records.length; i++) {
    if (outcomes[i] !== OK) continue;
    try {
      await applyAll(conn, [records[i]!], maxColumns);
    } catch (err) {
      if (!isDataError(err)) throw err;
      outcomes[i] = failed(`the local warehouse refused this record: ${errorMessage(err)}`, err);
    }
  }
  return outcomes;
}
