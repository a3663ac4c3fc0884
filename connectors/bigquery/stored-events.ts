import type { TrackedRecord } from '../../src/core/records/types';
import type { WriteDeps } from './write-part';
import { tablePath } from './merge-sql';
import { stringArray, timestamp } from './query-params';

/**
 * Which of these events the table holds already. Asked before events that may have landed are sent
 * again (an attempt without an answer, a holder that died mid-write): BigQuery forgets insertIds
 * after about a minute, and a retry can come hours later. Streamed rows are visible to queries as
 * soon as insertAll is acknowledged, so a row that landed is found.
 *
 * One query, filtered on `_event_at` (the partitioning column) between the batch's first and last
 * event time so that only those days' partitions are scanned; it reads the `_id` and `_event_at`
 * columns of those partitions and is billed at least 10 MB. It runs only for re-sends, never on
 * the common path.
 */
/** The first and last `_event_at` of some events, for a look-up that reads only those days' partitions. */
export function eventTimeRange(events: readonly TrackedRecord[]): { from: Date; to: Date } {
  let from = Infinity;
  let to = -Infinity;
  for (const e of events) {
    const at = Date.parse(e.eventAt ?? e.receivedAt);
    if (at < from) from = at;
    if (at > to) to = at;
  }
  return { from: new Date(from), to: new Date(to) };
}

export async function storedEventIds(deps: WriteDeps, table: string, events: readonly TrackedRecord[], signal: AbortSignal): Promise<Set<string>> {
  if (events.length === 0) return new Set();
  const { from, to } = eventTimeRange(events);
  const path = tablePath(deps.settings.projectId, deps.settings.dataset, table);
  const sql = `SELECT t.\`_id\` AS k FROM ${path} AS t WHERE t.\`_event_at\` BETWEEN @from AND @to AND t.\`_id\` IN UNNEST(@ids)`;
  const params = [timestamp('from', from), timestamp('to', to), stringArray('ids', events.map((e) => e.id))];
  const rows = await deps.api.query(sql, params, signal, 'look-up of events that may be stored already');
  return new Set(rows.map((r) => String(r.k)));
}
