import type { JsonValue, Properties, RequestContext, TrackedRecord } from '../../src/core/records/types';

/** Properties as normalization leaves them: a null-prototype object. */
export const props = (o: Record<string, JsonValue>): Properties => Object.assign(Object.create(null) as Properties, o);

let seq = 0;
/** UUIDv7-shaped and increasing, so that ordering by `_id` is ordering by creation. */
const nextId = () => `0190a000-0000-7000-8000-${(++seq).toString(16).padStart(12, '0')}`;
/** One second apart from 2026-01-01, so that every record has its own time. */
const at = () => new Date(Date.UTC(2026, 0, 1) + seq * 1000).toISOString();

export const user = (uid: string, p: Record<string, JsonValue>, context?: RequestContext): TrackedRecord => ({
  kind: 'user',
  id: nextId(),
  receivedAt: at(),
  uid,
  properties: props(p),
  ...(context ? { context } : {}),
});

export const session = (sid: string, p: Record<string, JsonValue>, uid?: string): TrackedRecord => ({
  kind: 'session',
  id: nextId(),
  receivedAt: at(),
  sid,
  ...(uid === undefined ? {} : { uid }),
  properties: props(p),
});

export const event = (name: string, p: Record<string, JsonValue>, extra: Partial<TrackedRecord> = {}): TrackedRecord => {
  const time = at();
  return { kind: 'event', id: nextId(), receivedAt: time, eventAt: time, event: name, properties: props(p), ...extra };
};

/** JSON columns come back as their text from DuckDB and BigQuery. */
export const json = (value: unknown): unknown => (typeof value === 'string' ? JSON.parse(value) : value);
