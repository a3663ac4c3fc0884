import type { DuckDBConnection } from '@duckdb/node-api';
import type { TrackedRecord } from '../../src/core/records/types';
import { uniqueById } from '../shared/batch-records';
import { reservedValues } from '../shared/reserved-columns';
import { planColumns, touchedColumns } from '../shared/column-plan';
import { createRowMapper } from './rows';
import { applyColumnPlan, readColumns } from './schema';
import { isOutOfMemoryError } from './duckdb-errors';
import { appendRows } from './append';
import { columnList, dropStage, stageRows } from './stage';
import { LOCAL_COLUMN_RULES, TABLE } from './tables';

/**
 * What an events insert does with an `_id` the table holds already. `skip`: the rows are staged
 * and moved by `INSERT … ON CONFLICT DO NOTHING`. `refuse`: they are appended straight into the
 * table (append.ts), which DuckDB refuses whole (AppendRefusedError) when one of its keys is
 * taken. `ON CONFLICT` looks every row up in the `_id` index before the append, which checks the
 * key again: a plain INSERT cost DuckDB 8 µs a record less, and the straight append another 2.5
 * (batches of 1 250 typical events, bench/RESULTS.md).
 */
export type StoredEvents = 'skip' | 'refuse';

/**
 * A straight append was refused: an event the table holds, or a cell its column's type does not
 * take. The transaction is spoilt; the caller writes the batch again with `skip`, whose statement
 * skips stored events and names a record's bad value as a data error.
 */
export class AppendRefusedError extends Error {
  constructor(override readonly cause: unknown) {
    super('the events could not be appended as they are');
  }
}

/**
 * Appends events, each exactly once: `_id` is the primary key, so a re-delivered batch (a retry,
 * a worker killed after the commit) adds nothing: `skip` leaves out the stored ones, `refuse`
 * throws AppendRefusedError for the caller to write the batch again with `skip`. Runs inside the
 * caller's transaction.
 */
export async function writeEvents(conn: DuckDBConnection, records: readonly TrackedRecord[], maxColumns: number, stored: StoredEvents): Promise<void> {
  // A record repeated inside one batch would conflict with itself within the statement.
  const events = uniqueById(records);
  const properties = events.map((r) => r.properties);

  const before = await readColumns(conn, TABLE.event);
  const plan = await applyColumnPlan(conn, TABLE.event, planColumns(LOCAL_COLUMN_RULES, before, properties, maxColumns));
  const mapper = createRowMapper('event', plan, touchedColumns(plan, properties));
  const rows = events.map((r) => mapper.row(reservedValues(r), r.context, r.properties));
  if (stored === 'refuse') {
    try {
      // Added columns come last, in the plan's order; the table is not read again here, since
      // what a transaction that may roll back reads must not be cached (column-cache.ts).
      const tableColumns = [...before.map((c) => c.name), ...plan.add.map((c) => c.name)];
      await appendRows(conn, TABLE.event, tableColumns, mapper.columns, rows);
    } catch (err) {
      // Memory is the writer's to raise (write-recovering.ts), not a reason to try another way.
      throw isOutOfMemoryError(err) ? err : new AppendRefusedError(err);
    }
    return;
  }
  const select = await stageRows(conn, mapper.columns, rows);
  await conn.run(`INSERT INTO ${TABLE.event} (${columnList(mapper.columns)}) ${select} ON CONFLICT DO NOTHING`);
  await dropStage(conn);
}
