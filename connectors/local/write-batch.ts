import type { DuckDBConnection } from '@duckdb/node-api';
import type { TrackedRecord } from '../../src/core/records/types';
import type { RecordOutcome } from '../types';
import { coalesceUpserts } from '../shared/coalesce-upserts';
import { writeIsolatingDataErrors } from '../shared/isolate-data-errors';
import { errorMessage, isDataError } from './duckdb-errors';
import { AppendRefusedError, writeEvents, type StoredEvents } from './write-events';
import { writeUpserts } from './write-upserts';

/** Writes records of all three kinds in one transaction: all of them, or (on any error) none. */
async function applyAll(conn: DuckDBConnection, records: readonly TrackedRecord[], maxColumns: number, stored: StoredEvents): Promise<void> {
  const users = records.filter((r) => r.kind === 'user');
  const sessions = records.filter((r) => r.kind === 'session');
  const events = records.filter((r) => r.kind === 'event');
  await conn.run('BEGIN TRANSACTION');
  try {
    if (users.length > 0) await writeUpserts(conn, 'user', coalesceUpserts('user', users).changes, maxColumns);
    if (sessions.length > 0) await writeUpserts(conn, 'session', coalesceUpserts('session', sessions).changes, maxColumns);
    if (events.length > 0) await writeEvents(conn, events, maxColumns, stored);
    await conn.run('COMMIT');
  } catch (err) {
    await conn.run('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/**
 * Events are appended straight into their table unless some may be stored already (`resend`); a
 * batch whose append is refused (a client sending an `_id` again, a value its column does not
 * take) is rolled back and written again through the stage, which skips stored events and reports
 * a bad value as a data error.
 */
async function applyEventsOnce(conn: DuckDBConnection, records: readonly TrackedRecord[], maxColumns: number, resend: boolean): Promise<void> {
  if (resend) return applyAll(conn, records, maxColumns, 'skip');
  try {
    await applyAll(conn, records, maxColumns, 'refuse');
  } catch (err) {
    if (!(err instanceof AppendRefusedError)) throw err;
    await applyAll(conn, records, maxColumns, 'skip');
  }
}

/**
 * Writes one batch in one transaction; a data error is isolated to its records
 * (connectors/shared/isolate-data-errors.ts). `resend`: some of the records may be stored already.
 */
export function writeBatch(conn: DuckDBConnection, records: readonly TrackedRecord[], maxColumns: number, resend: boolean): Promise<RecordOutcome[]> {
  return writeIsolatingDataErrors(
    { apply: (batch) => applyEventsOnce(conn, batch, maxColumns, resend), isDataError, refused: (err) => `the local warehouse refused this record: ${errorMessage(err)}` },
    records,
  );
}
