import { parseExactJson } from '../../src/core/records/exact-json';
import type { Properties } from '../../src/core/records/types';
import { applyChange, type MergedChange, type UpsertKind } from '../shared/coalesce-upserts';
import { planColumns, touchedColumns } from '../shared/column-plan';
import { CONTEXT_COLUMN, KEY_COLUMN, PROPERTIES_COLUMN, reservedValuesOfChange } from '../shared/reserved-columns';
import { createRowMapper } from './rows';
import { POSTGRES_COLUMN_RULES, qualified, quoteIdent } from './sql';
import { columnList, stageRows } from './stage';
import { fixedColumns, TABLE } from './tables';
import type { TableTarget } from './write-events';

/**
 * The stored `_properties` of the given keys, their rows locked for the transaction (`FOR
 * UPDATE`): a second writer of the same keys waits instead of merging from the same old state.
 */
async function readStored(target: TableTarget, kind: UpsertKind, keys: readonly string[]): Promise<Map<string, Properties>> {
  const key = quoteIdent(KEY_COLUMN[kind]);
  // As text: pg would parse jsonb with JSON.parse, which rounds integers beyond 2^53.
  const { rows } = await target.client.query<{ k: string; p: string }>(
    `SELECT ${key} AS k, ${quoteIdent(PROPERTIES_COLUMN)}::text AS p FROM ${qualified(target.schema, TABLE[kind])} WHERE ${key} = ANY($1::text[]) FOR UPDATE`,
    [keys],
  );
  const stored = new Map<string, Properties>();
  for (const { k, p } of rows) {
    const parsed: unknown = parseExactJson(p);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) stored.set(k, parsed as Properties);
  }
  return stored;
}

/**
 * Applies one batch's merged changes to `users` or `sessions`, inside the caller's transaction.
 * The merge is done here, by top-level property, with the rule every connector shares
 * (`applyChange`: supplied properties replace, `null` clears, the rest are kept), and whole rows
 * are written: `_properties` and the typed columns stay one function of the other. PostgreSQL
 * refuses a statement that touches a row twice; the batch's updates of a key were folded into
 * one change before (coalesceUpserts).
 */
export async function writeUpserts(target: TableTarget, kind: UpsertKind, changes: readonly MergedChange[]): Promise<void> {
  const { client, schema, state } = target;
  const table = TABLE[kind];
  const stored = await readStored(
    target,
    kind,
    changes.map((c) => c.key),
  );
  const states = changes.map((c) => applyChange(stored.get(c.key), c.properties));
  const plan = await state.apply(client, schema, table, planColumns(POSTGRES_COLUMN_RULES, await state.read(client, schema, table), states, target.maxColumns));
  const mapper = createRowMapper(kind, plan, touchedColumns(plan, states));
  const stage = await stageRows(
    client,
    mapper.columns,
    changes.map((c, i) => mapper.row(reservedValuesOfChange(kind, c), c.context, states[i]!)),
  );

  const key = KEY_COLUMN[kind];
  // A session update without `_uid`, or any update without request context, keeps the stored one.
  const keepStored = new Set<string>([CONTEXT_COLUMN, ...(kind === 'session' ? ['_uid'] : [])]);
  const target_ = qualified(schema, table);
  // Every writable column is assigned: one the stage lacks becomes NULL, which is right, since the
  // merged state no longer has that property (cleared) or has a value that does not fit.
  const assignments = [...fixedColumns(kind).map((c) => c.name), ...plan.columns.keys()]
    .filter((name) => name !== key)
    .map((name) => {
      const col = quoteIdent(name);
      return keepStored.has(name) ? `${col} = COALESCE(excluded.${col}, ${target_}.${col})` : `${col} = excluded.${col}`;
    });
  const columns = columnList(mapper.columns);
  await client.query(`INSERT INTO ${target_} (${columns}) SELECT ${columns} FROM ${stage} ON CONFLICT (${quoteIdent(key)}) DO UPDATE SET ${assignments.join(', ')}`);
}
