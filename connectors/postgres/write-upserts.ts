import { parseExactJson } from '../../src/core/records/exact-json';
import type { Properties } from '../../src/core/records/types';
import { applyChange, guardLateChange, type MergedChange, type StoredLatest, type UpsertKind } from '../shared/coalesce-upserts';
import { planColumns, touchedColumns } from '../shared/column-plan';
import { CONTEXT_COLUMN, KEY_COLUMN, PROPERTIES_COLUMN, reservedValuesOfChange } from '../shared/reserved-columns';
import { createRowMapper } from './rows';
import { POSTGRES_COLUMN_RULES, qualified, quoteIdent } from './sql';
import { columnList, stageRows } from './stage';
import { fixedColumns, TABLE } from './tables';
import type { TableTarget } from './write-events';

/**
 * The stored `_properties` of the keys that have a row, each row locked for the transaction (`FOR
 * UPDATE`): a second writer of the same keys waits instead of merging from the same old state.
 * Rows are locked in one order (bytewise: the same for every writer, and cheap to sort), so two
 * writers wait for each other rather than deadlock.
 */
async function lockStored(target: TableTarget, kind: UpsertKind, keys: readonly string[]): Promise<Map<string, StoredRow>> {
  const key = quoteIdent(KEY_COLUMN[kind]);
  // As text: pg would parse jsonb with JSON.parse, which rounds integers beyond 2^53.
  const { rows } = await target.client.query<{ k: string; p: string; id: string; r: string }>(
    `SELECT ${key} AS k, ${quoteIdent(PROPERTIES_COLUMN)}::text AS p, "_id" AS id, to_char("_received_at" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS r
     FROM ${qualified(target.schema, TABLE[kind])} WHERE ${key} = ANY($1::text[]) ORDER BY ${key} COLLATE "C" FOR UPDATE`,
    [keys],
  );
  const stored = new Map<string, StoredRow>();
  for (const { k, p, id, r } of rows) {
    const parsed: unknown = parseExactJson(p);
    const properties = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Properties) : (Object.create(null) as Properties);
    stored.set(k, { properties, latest: { id, receivedAt: r } });
  }
  return stored;
}

/** A stored row's merged state and its latest update, for the merge and the order guard. */
interface StoredRow {
  properties: Properties;
  latest: StoredLatest;
}

/**
 * Applies one batch's merged changes to `users` or `sessions`, inside the caller's transaction.
 * The merge is done here, by top-level property, with the rule every connector shares
 * (`applyChange`: supplied properties replace, `null` clears, the rest are kept), and whole rows
 * are written: `_properties` and the typed columns stay one function of the other. PostgreSQL
 * refuses a statement that touches a row twice; the batch's updates of a key were folded into
 * one change before (coalesceUpserts).
 *
 * `FOR UPDATE` locks only rows that exist. A key without a row is inserted `ON CONFLICT DO
 * NOTHING`: when another writer (another partition, a backfill beside live traffic) made that
 * row meanwhile, the insert waits for its commit and skips the key, which is then merged again
 * from the row as that writer left it. Written over instead, its properties would be lost.
 */
export async function writeUpserts(target: TableTarget, kind: UpsertKind, changes: readonly MergedChange[]): Promise<void> {
  const { client, schema, state } = target;
  const table = TABLE[kind];
  const limit = () => state.columnLimit(client, schema, table, target.maxColumns);
  // Columns first, before any row is locked: ALTER TABLE waits for every other transaction on the
  // table, and two writers each holding rows while waiting so would deadlock.
  await state.apply(client, schema, table, planColumns(POSTGRES_COLUMN_RULES, await state.read(client, schema, table), changes.map((c) => c.properties), await limit()));
  const stored = await lockStored(
    target,
    kind,
    changes.map((c) => c.key),
  );
  // An update older than its row (a dead letter replayed late) fills gaps and overwrites nothing.
  const guarded = changes.map((c) => guardLateChange(c, stored.get(c.key)?.properties, stored.get(c.key)?.latest));
  const states = guarded.map((c) => applyChange(stored.get(c.key)?.properties, c.properties));
  // The stored state can still want a column (one dropped by hand since); usually nothing to do.
  const plan = await state.apply(client, schema, table, planColumns(POSTGRES_COLUMN_RULES, await state.read(client, schema, table), states, await limit()));
  const mapper = createRowMapper(kind, plan, touchedColumns(plan, states));
  const stage = await stageRows(
    client,
    mapper.columns,
    guarded.map((c, i) => mapper.row(reservedValuesOfChange(kind, c), c.context, states[i]!)),
  );

  const key = KEY_COLUMN[kind];
  const keyColumn = quoteIdent(key);
  const target_ = qualified(schema, table);
  const columns = columnList(mapper.columns);
  const existing = changes.filter((c) => stored.has(c.key)).map((c) => c.key);
  const fresh = changes.length - existing.length;
  // Only a batch of both kinds of keys needs its stage split.
  const only = (which: 'existing' | 'fresh') => (existing.length === 0 || fresh === 0 ? '' : `WHERE ${keyColumn} ${which === 'existing' ? '' : 'NOT '}IN (SELECT unnest($1::text[]))`);
  const params = existing.length === 0 || fresh === 0 ? [] : [existing];

  if (existing.length > 0) {
    // A session update without `_uid`, or any update without request context, keeps the stored one.
    const keepStored = new Set<string>([CONTEXT_COLUMN, ...(kind === 'session' ? ['_uid'] : [])]);
    // Every writable column is assigned: one the stage lacks becomes NULL, which is right, since the
    // merged state no longer has that property (cleared) or has a value that does not fit.
    const assignments = [...fixedColumns(kind).map((c) => c.name), ...plan.columns.keys()]
      .filter((name) => name !== key)
      .map((name) => {
        const col = quoteIdent(name);
        return keepStored.has(name) ? `${col} = COALESCE(excluded.${col}, ${target_}.${col})` : `${col} = excluded.${col}`;
      });
    await client.query(`INSERT INTO ${target_} (${columns}) SELECT ${columns} FROM ${stage} ${only('existing')} ON CONFLICT (${keyColumn}) DO UPDATE SET ${assignments.join(', ')}`, params);
  }
  if (fresh > 0) {
    // In key order, as rows are locked: two writers inserting the same new keys wait, never deadlock.
    const { rows } = await client.query<{ k: string }>(
      `INSERT INTO ${target_} (${columns}) SELECT ${columns} FROM ${stage} ${only('fresh')} ORDER BY ${keyColumn} COLLATE "C" ON CONFLICT (${keyColumn}) DO NOTHING RETURNING ${keyColumn} AS k`,
      params,
    );
    if (rows.length < fresh) {
      const inserted = new Set(rows.map((r) => r.k));
      await writeUpserts(
        target,
        kind,
        changes.filter((c) => !stored.has(c.key) && !inserted.has(c.key)),
      );
    }
  }
}
