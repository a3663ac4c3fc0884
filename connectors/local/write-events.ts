import type { DuckDBConnection } from '@duckdb/node-api';
import type { TrackedRecord } from '../../src/core/records/types';
import { uniqueById } from '../shared/batch-records';
import { reservedValues } from '../shared/reserved-columns';
import { planColumns, touchedColumns } from '../shared/column-plan';
import { createRowMapper } from './rows';
import { applyColumnPlan, readColumns } from './schema';
import { isDuplicateKeyError } from './duckdb-errors';
import { columnList, dropStage, stageRows } from './stage';
import { LOCAL_COLUMN_RULES, TABLE } from './tables';

/**
 * What an events insert does with an `_id` the table holds already. `skip`: `ON CONFLICT DO
 * NOTHING`. `refuse`: a plain INSERT, which DuckDB refuses whole (StoredEventError) when one
 * of its keys is taken; it costs DuckDB about a third of the other (8 µs a record less, measured
 * with batches of 1 250 typical events, bench/RESULTS.md), since `ON CONFLICT` looks every row up
 * in the `_id` index before the append, which checks the key again.
 */
export type StoredEvents = 'skip' | 'refuse';

/** A plain insert met an event the table holds: its transaction is spoilt, write it again skipping them. */
export class StoredEventError extends Error {
  constructor(override readonly cause: unknown) {
    super('an event of this batch is stored already');
  }
}

/**
 * Appends events, each exactly once: `_id` is the primary key, so a re-delivered batch (a retry,
 * a worker killed after the commit) adds nothing: `skip` leaves out the stored ones, `refuse`
 * throws StoredEventError for the caller to write the batch again with `skip`. Runs inside the
 * caller's transaction.
 */
export async function writeEvents(conn: DuckDBConnection, records: readonly TrackedRecord[], maxColumns: number, stored: StoredEvents): Promise<void> {
  // A record repeated inside one batch would conflict with itself within the statement.
  const events = uniqueById(records);
  const properties = events.map((r) => r.properties);

  const plan = await applyColumnPlan(conn, TABLE.event, planColumns(LOCAL_COLUMN_RULES, await readColumns(conn, TABLE.event), properties, maxColumns));
  const mapper = createRowMapper('event', plan, touchedColumns(plan, properties));
  const select = await stageRows(
    conn,
    mapper.columns,
    events.map((r) => mapper.row(reservedValues(r), r.context, r.properties)),
  );
  const insert = `INSERT INTO ${TABLE.event} (${columnList(mapper.columns)}) ${select}`;
  if (stored === 'skip') await conn.run(`${insert} ON CONFLICT DO NOTHING`);
  else {
    try {
      await conn.run(insert);
    } catch (err) {
      throw isDuplicateKeyError(err) ? new StoredEventError(err) : err;
    }
  }
  await dropStage(conn);
}
