import type { PoolClient } from 'pg';
import type { TrackedRecord } from '../../src/core/records/types';
import { uniqueById } from '../shared/batch-records';
import { planColumns, touchedColumns } from '../shared/column-plan';
import { reservedValues } from '../shared/reserved-columns';
import { createRowMapper } from './rows';
import type { SchemaState } from './schema';
import { POSTGRES_COLUMN_RULES, qualified } from './sql';
import { columnList, stageRows } from './stage';
import { TABLE } from './tables';

/** Where a batch writes, and what the writer knows of it. */
export interface TableTarget {
  client: PoolClient;
  schema: string;
  state: SchemaState;
  maxColumns: number;
}

/**
 * Appends events, each exactly once: `_id` is the primary key and a conflict is skipped, so a
 * batch delivered again (a lost answer, a worker killed after its commit) adds nothing. Runs
 * inside the caller's transaction.
 */
export async function writeEvents(target: TableTarget, records: readonly TrackedRecord[]): Promise<void> {
  const { client, schema, state } = target;
  // A record repeated inside one batch would meet itself in the statement.
  const events = uniqueById(records);
  const properties = events.map((r) => r.properties);
  const limit = await state.columnLimit(client, schema, TABLE.event, target.maxColumns);
  const plan = await state.apply(client, schema, TABLE.event, planColumns(POSTGRES_COLUMN_RULES, await state.read(client, schema, TABLE.event), properties, limit));
  const mapper = createRowMapper('event', plan, touchedColumns(plan, properties));
  const stage = await stageRows(
    client,
    mapper.columns,
    events.map((r) => mapper.row(reservedValues(r), r.context, r.properties)),
  );
  const columns = columnList(mapper.columns);
  await client.query(`INSERT INTO ${qualified(schema, TABLE.event)} (${columns}) SELECT ${columns} FROM ${stage} ON CONFLICT ("_id") DO NOTHING`);
}
