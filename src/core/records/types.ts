/** The three levels of tracking data, named as their endpoint paths name them. */
export const RECORD_KINDS = ['user', 'session', 'event'] as const;
export type RecordKind = (typeof RECORD_KINDS)[number];

/**
 * A property value. `bigint` is an integer outside ±(2^53−1) as the client wrote it (see
 * exact-json.ts); a safe integer is always a `number`.
 */
export type JsonValue = string | number | bigint | boolean | null | JsonValue[] | { [key: string]: JsonValue };
/** Free-form properties. Built on null-prototype objects so that `__proto__` is an ordinary key. */
export type Properties = Record<string, JsonValue>;

/**
 * An empty object without a prototype, so that `__proto__` and `constructor` are ordinary keys.
 * Not `Object.create(null)`: V8 makes that a dictionary-mode object, while this one keeps fast
 * properties (up to ~20 keys, past which V8 turns it into a dictionary too), so filling it, reading
 * it and JSON.stringify of the queued job (BullMQ's asJSON) cost less: ~1.9 µs of CPU per
 * record in arrays of 100 events (bench/RESULTS.md).
 */
export function nullProtoObject<T extends object>(): T {
  return Object.setPrototypeOf({}, null) as T;
}

/** Who sent the record, captured when the tracker asks for it. */
export interface RequestContext {
  ip?: string;
  userAgent?: string;
  referer?: string;
}

/**
 * A validated, normalized record as it is queued and delivered. Field names here are the
 * TypeScript names; destinations write them under the reserved column names
 * (`_id`, `_uid`, `_sid`, `_event`, `_event_at`, `_received_at`).
 */
export interface TrackedRecord {
  kind: RecordKind;
  /** `_id`: the client's key when it sent one (`_id` or `Idempotency-Key`), else a UUIDv7. */
  id: string;
  /** `_received_at`: ISO 8601 UTC with milliseconds. */
  receivedAt: string;
  uid?: string;
  sid?: string;
  event?: string;
  /** `_event_at`: ISO 8601 UTC with milliseconds; the receive time when the client sent none. */
  eventAt?: string;
  properties: Properties;
  context?: RequestContext;
}

/** Reserved names that clients may send, per kind. `_token` is accepted everywhere and never stored. */
export const CLIENT_RESERVED: Readonly<Record<RecordKind, ReadonlySet<string>>> = {
  user: new Set(['_id', '_uid']),
  session: new Set(['_id', '_sid', '_uid']),
  event: new Set(['_id', '_event', '_uid', '_sid', '_event_at']),
};
