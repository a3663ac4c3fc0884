import type { Properties, RequestContext, TrackedRecord } from '../../src/core/records/types';

/** The upserted resources and the field that keys each of them. */
export type UpsertKind = 'user' | 'session';

/** One key's updates from one batch, folded into a single change. */
export interface MergedChange {
  /** `uid` for users, `sid` for sessions. */
  key: string;
  /**
   * Every property any folded update supplied, with the value of the latest one. An explicit
   * `null` means "clear" and is kept, so that applying the change to the stored row removes the
   * property there too. Null-prototype, like the records' own properties.
   */
  properties: Properties;
  /** Sessions only: the latest non-empty `uid` among the folded updates. */
  uid?: string;
  /** The latest request context among the folded updates that carried one. */
  context?: RequestContext;
  /** The latest folded update: its `id` and `receivedAt` become the row's `_id` and `_received_at`. */
  latest: TrackedRecord;
  /** Ids of the folded records, in order, so that the key's outcome can be reported for each. */
  recordIds: string[];
}

export interface CoalescedUpserts {
  /** One change per key, in the order each key was first seen. */
  changes: MergedChange[];
  /** Records of the wrong kind or without their key; they cannot be applied. */
  rejected: TrackedRecord[];
}

const keyOf = (kind: UpsertKind, r: TrackedRecord): string | undefined => (kind === 'user' ? r.uid : r.sid);

/**
 * Folds the user (or session) updates of one batch, given in accepted order, into one change per
 * key. Destinations then write each key once per batch, which is both faster and what upsert
 * statements such as DuckDB's `ON CONFLICT DO UPDATE` require (a key may change once per statement).
 */
export function coalesceUpserts(kind: UpsertKind, records: readonly TrackedRecord[]): CoalescedUpserts {
  const byKey = new Map<string, MergedChange>();
  const rejected: TrackedRecord[] = [];
  for (const record of records) {
    const key = keyOf(kind, record);
    if (record.kind !== kind || key === undefined || key === '') {
      rejected.push(record);
      continue;
    }
    let change = byKey.get(key);
    if (!change) {
      change = { key, properties: Object.create(null) as Properties, latest: record, recordIds: [] };
      byKey.set(key, change);
    }
    for (const name of Object.keys(record.properties)) change.properties[name] = record.properties[name]!;
    if (kind === 'session' && record.uid) change.uid = record.uid;
    if (record.context && Object.keys(record.context).length > 0) change.context = record.context;
    change.latest = record;
    change.recordIds.push(record.id);
  }
  return { changes: [...byKey.values()], rejected };
}

/**
 * Applies a merged change to a stored property set: supplied properties replace the stored value
 * whole (a nested object is one value, not merged key by key), `null` removes the property, and
 * properties the change does not mention are kept. Returns a new null-prototype object.
 */
export function applyChange(stored: Properties | undefined, change: Properties): Properties {
  const next = Object.create(null) as Properties;
  if (stored) for (const name of Object.keys(stored)) next[name] = stored[name]!;
  for (const name of Object.keys(change)) {
    const value = change[name]!;
    if (value === null) delete next[name];
    else next[name] = value;
  }
  return next;
}

/** What a destination stored of a key's latest update: its `_id` and `_received_at`. */
export interface StoredLatest {
  id: string;
  /** ISO 8601 UTC, as records carry it. */
  receivedAt: string;
}

/**
 * The order guard: a change older than the stored row (its latest update was received before the
 * row's, e.g. a dead letter replayed days later, or a batch retried after newer ones went) never
 * overwrites a newer value. It only fills properties the row does not have; its clears are no-ops;
 * the row keeps its `_id`, `_received_at`, `_context` and session `_uid`. A change as new as the
 * row or newer is returned as it is.
 */
export function guardLateChange(change: MergedChange, stored: Properties | undefined, latest: StoredLatest | undefined): MergedChange {
  if (!stored || !latest || Date.parse(change.latest.receivedAt) >= Date.parse(latest.receivedAt)) return change;
  const gaps = Object.create(null) as Properties;
  for (const name of Object.keys(change.properties)) {
    const value = change.properties[name]!;
    if (value !== null && !Object.hasOwn(stored, name)) gaps[name] = value;
  }
  const { uid: _uid, context: _context, ...rest } = change;
  return { ...rest, properties: gaps, latest: { ...change.latest, id: latest.id, receivedAt: latest.receivedAt } };
}
