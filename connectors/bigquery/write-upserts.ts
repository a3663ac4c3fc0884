import type { Properties, TrackedRecord } from '../../src/core/records/types';
import type { RecordOutcome } from '../types';
import { missingKeyError } from '../shared/batch-records';
import { applyChange, coalesceUpserts, type UpsertKind } from '../shared/coalesce-upserts';
import { KEY_COLUMN } from '../shared/reserved-columns';
import { planColumns } from './columns';
import { mergeLayout, mergeRow } from './merge-rows';
import { mergeSql, readStoredSql, tablePath } from './merge-sql';
import { stringArray, structArray } from './query-params';
import { chunkBySize } from '../shared/chunk-by-size';
import { withTableLock } from './table-lock';
import type { PartResult, WriteDeps } from './write-part';
import { parseExactJson } from '../../src/core/records/exact-json';

/**
 * jobs.query takes at most 10 MB per request (https://cloud.google.com/bigquery/quotas#api_request_quotas);
 * the rows parameter is kept under 8 MiB, so a batch is one MERGE unless its rows are that large.
 */
const MAX_PARAM_BYTES = 8 * 1024 * 1024;

async function readStored(deps: WriteDeps, kind: UpsertKind, path: string, keys: readonly string[], signal: AbortSignal): Promise<Map<string, Properties>> {
  const rows = await deps.api.query(readStoredSql(path, KEY_COLUMN[kind]), [stringArray('keys', keys)], signal, `read of stored ${kind}s`);
  const stored = new Map<string, Properties>();
  for (const row of rows) {
    const parsed: unknown = row.p === null || row.p === undefined ? null : parseExactJson(row.p);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) stored.set(String(row.k), Object.assign(Object.create(null) as Properties, parsed));
  }
  return stored;
}

/**
 * Users or sessions: updates to one key are folded in batch order (coalesce-upserts), the stored
 * `_properties` of the batch's keys are read (one SELECT), each key's new state is computed with
 * the rule every connector shares (supplied properties replace, `null` clears, others stay), new
 * properties get columns, and one MERGE writes every key's whole state. Re-running it after a lost
 * answer reads the state it wrote and writes the same state again, so a retry is harmless.
 * The read, the schema change and the MERGE hold the table's lock: one MERGE at a time per table.
 */
export async function writeUpserts(deps: WriteDeps, kind: UpsertKind, records: readonly TrackedRecord[], signal: AbortSignal): Promise<PartResult> {
  const outcomes = new Map<string, RecordOutcome>();
  const { changes, rejected } = coalesceUpserts(kind, records);
  for (const r of rejected) outcomes.set(r.id, { status: 'failed', error: missingKeyError(kind) });
  if (changes.length === 0) return { outcomes };

  const table = deps.schema.tableName(kind);
  const path = tablePath(deps.settings.projectId, deps.settings.dataset, table);
  await withTableLock(`${deps.settings.projectId}:${deps.settings.dataset}.${table}`, async () => {
    const state = await deps.schema.table(kind, signal);
    const stored = await readStored(deps, kind, path, changes.map((c) => c.key), signal);
    const states = changes.map((c) => applyChange(stored.get(c.key), c.properties));
    const { plan } = await deps.schema.evolve(kind, state, planColumns(state, states, deps.settings.maxColumns), signal);

    const mentioned = new Set(changes.flatMap((c, i) => [...Object.keys(stored.get(c.key) ?? {}), ...Object.keys(states[i]!)]));
    const layout = mergeLayout(kind, plan, mentioned);
    const rows = changes.map((c, i) => mergeRow(kind, layout, c, states[i]!));
    const sql = mergeSql(path, KEY_COLUMN[kind], layout.columns);
    const types = layout.columns.map((c) => c.type);
    // Each cell travels as `{"value":…}`: its JSON text plus 11 bytes.
    for (const chunk of chunkBySize(rows, MAX_PARAM_BYTES, (r) => r.reduce((n, c) => n + Buffer.byteLength(JSON.stringify(c)) + 12, 16))) {
      await deps.api.query(sql, [structArray('rows', types, chunk)], signal, `MERGE into ${table}`);
    }
  }, signal);
  for (const c of changes) for (const id of c.recordIds) outcomes.set(id, { status: 'ok' });
  return { outcomes };
}
