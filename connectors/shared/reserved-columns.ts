import type { RecordKind, RequestContext, TrackedRecord } from '../../src/core/records/types';
import type { MergedChange, UpsertKind } from './coalesce-upserts';

/** The reserved columns, in the fixed order in which every destination lays them out. */
export const RESERVED_COLUMNS = ['_id', '_uid', '_sid', '_event', '_event_at', '_received_at'] as const;
export type ReservedColumn = (typeof RESERVED_COLUMNS)[number];

/** Request context (ip, user agent, referer), as one JSON value, when the tracker captures it. */
export const CONTEXT_COLUMN = '_context';

/**
 * Every record's properties as one JSON value (for users and sessions, the merged state): the
 * column that never loses a value, in the destinations that have a JSON type.
 */
export const PROPERTIES_COLUMN = '_properties';

/**
 * The reserved columns each resource has, in order. Users and sessions are one row per key that
 * updates overwrite, so their `_id` and `_received_at` are those of the latest update; they have
 * no `_event` / `_event_at`.
 */
export const RESERVED_COLUMNS_BY_KIND: Readonly<Record<RecordKind, readonly ReservedColumn[]>> = {
  user: ['_id', '_uid', '_received_at'],
  session: ['_id', '_uid', '_sid', '_received_at'],
  event: RESERVED_COLUMNS,
};

/** The column that identifies a row: one row per user, per session, per event. */
export const KEY_COLUMN: Readonly<Record<RecordKind, ReservedColumn>> = { user: '_uid', session: '_sid', event: '_id' };

/** Reserved column → value for one row; `null` where the record has no value (e.g. an anonymous event's `_uid`). */
export type ReservedValues = Partial<Record<ReservedColumn, string | null>>;

function pick(kind: RecordKind, all: Record<ReservedColumn, string | null>): ReservedValues {
  const out: ReservedValues = {};
  for (const column of RESERVED_COLUMNS_BY_KIND[kind]) out[column] = all[column];
  return out;
}

/** The reserved values of one record, restricted to its kind's columns. */
export function reservedValues(record: TrackedRecord): ReservedValues {
  return pick(record.kind, {
    _id: record.id,
    _uid: record.uid ?? null,
    _sid: record.sid ?? null,
    _event: record.event ?? null,
    _event_at: record.eventAt ?? null,
    _received_at: record.receivedAt,
  });
}

/**
 * The reserved values of a user's or session's merged change. A session's `_uid` is `null` when
 * no folded update supplied one: destinations keep the stored value then.
 */
export function reservedValuesOfChange(kind: UpsertKind, change: MergedChange): ReservedValues {
  return pick(kind, {
    _id: change.latest.id,
    _uid: kind === 'user' ? change.key : (change.uid ?? null),
    _sid: kind === 'session' ? change.key : null,
    _event: null,
    _event_at: null,
    _received_at: change.latest.receivedAt,
  });
}

/** The `_context` value: only the fields that were captured, or `undefined` when there are none. */
export function contextValue(context: RequestContext | undefined): RequestContext | undefined {
  if (!context) return undefined;
  const out: RequestContext = {};
  if (context.ip !== undefined) out.ip = context.ip;
  if (context.userAgent !== undefined) out.userAgent = context.userAgent;
  if (context.referer !== undefined) out.referer = context.referer;
  return Object.keys(out).length > 0 ? out : undefined;
}

/** A column every row of a kind has, with the SQL type a database gives it. */
export interface FixedColumn {
  name: string;
  sqlType: string;
}

/** How a SQL database types the fixed columns: each reserved column's type, and its JSON type. */
export interface FixedColumnTypes {
  reserved: Readonly<Record<ReservedColumn, string>>;
  json: string;
}

/** The reserved columns of a kind's table, then `_context` and `_properties`, in table order. */
export function fixedColumnsOf(kind: RecordKind, types: FixedColumnTypes): FixedColumn[] {
  return [
    ...RESERVED_COLUMNS_BY_KIND[kind].map((name) => ({ name, sqlType: types.reserved[name] })),
    { name: CONTEXT_COLUMN, sqlType: types.json },
    { name: PROPERTIES_COLUMN, sqlType: types.json },
  ];
}
