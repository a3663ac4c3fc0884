import type { DuckDBConnection } from '@duckdb/node-api';
import type { TrackedRecord } from '../../src/core/records/types';
import { uniqueById } from '../shared/batch-records';
import { reservedValues } from '../shared/reserved-columns';
import { planColumns, touchedColumns } from '../shared/column-plan';
import { createRowMapper } from './rows';
import { applyColumnPlan, readColumns } from './schema';
import { columnList, dropStage, stageRows } from './stage';
import { LOCAL_COLUMN_RULES, TABLE } from './tables';

/**
 * Appends events, each exactly once: `_id` is the primary key and a conflict is skipped, so a
 * re-delivered batch (a retry, a worker killed after the commit) adds nothing. Runs inside the
 * caller's transaction.
 */
export async function writeEvents(conn: DuckDBConnection, records: readonly TrackedRecord[], maxColumns: number): Promise<void> {
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
  await conn.run(`INSERT INTO ${TABLE.event} (${columnList(mapper.columns)}) ${select} ON CONFLICT DO NOTHING`);
  await dropStage(conn);
}
