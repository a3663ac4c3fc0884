import { applyChange, coalesceUpserts } from '../../../connectors/shared/coalesce-upserts';
import type { JsonValue, Properties, TrackedRecord } from '../../../src/core/records/types';

const props = (o: Record<string, JsonValue>): Properties => Object.assign(Object.create(null) as Properties, o);
let n = 0;
const user = (uid: string, p: Record<string, JsonValue>, extra: Partial<TrackedRecord> = {}): TrackedRecord => ({
  kind: 'user',
  id: `r${++n}`,
  receivedAt: new Date(1_700_000_000_000 + n).toISOString(),
  uid,
  properties: props(p),
  ...extra,
});
const session = (sid: string, p: Record<string, JsonValue>, uid?: string): TrackedRecord => ({
  kind: 'session',
  id: `r${++n}`,
  receivedAt: new Date(1_700_000_000_000 + n).toISOString(),
  sid,
  ...(uid === undefined ? {} : { uid }),
  properties: props(p),
});
const plain = (p: Properties) => ({ ...p });

describe('coalesceUpserts', () => {
  it('folds updates to one key in order: later values win, unsupplied ones stay', () => {
    const a = user('u1', { plan: 'free', age: 30 });
    const b = user('u1', { plan: 'pro' });
    const { changes } = coalesceUpserts('user', [a, b]);
    expect(changes).toHaveLength(1);
    expect(plain(changes[0]!.properties)).toEqual({ plan: 'pro', age: 30 });
    expect(changes[0]!.recordIds).toEqual([a.id, b.id]);
    expect(changes[0]!.latest).toBe(b);
  });

  it('keeps an explicit null as "clear", and a later value sets the property again', () => {
    const { changes } = coalesceUpserts('user', [user('u1', { a: 1, b: 2 }), user('u1', { a: null, b: null }), user('u1', { b: 3 })]);
    expect(plain(changes[0]!.properties)).toEqual({ a: null, b: 3 });
  });

  it('keeps the first-seen order of keys', () => {
    const { changes } = coalesceUpserts('user', [user('b', {}), user('a', {}), user('b', { x: 1 }), user('c', {})]);
    expect(changes.map((c) => c.key)).toEqual(['b', 'a', 'c']);
  });

  it('takes the latest non-empty _uid of a session, and the latest request context', () => {
    const first = session('s1', { n: 1 }, 'u1');
    const { changes } = coalesceUpserts('session', [first, session('s1', {}, 'u2'), session('s1', { n: 2 })]);
    expect(changes[0]!.uid).toBe('u2');
    expect(plain(changes[0]!.properties)).toEqual({ n: 2 });
    const ctx = coalesceUpserts('user', [user('u', {}, { context: { ip: '1.1.1.1' } }), user('u', {}), user('u', {}, { context: {} })]);
    expect(ctx.changes[0]!.context).toEqual({ ip: '1.1.1.1' });
  });

  it('rejects records without their key or of another kind', () => {
    const keyless = { ...user('x', {}), uid: undefined };
    const { changes, rejected } = coalesceUpserts('user', [keyless, session('s', {})]);
    expect(changes).toEqual([]);
    expect(rejected).toHaveLength(2);
  });

  it('treats __proto__ and constructor as ordinary property names', () => {
    const p = Object.create(null) as Properties;
    p['__proto__'] = { polluted: true };
    p['constructor'] = 'c';
    const { changes } = coalesceUpserts('user', [{ ...user('u', {}), properties: p }]);
    const merged = changes[0]!.properties;
    expect(Object.getPrototypeOf(merged)).toBeNull();
    expect(Object.keys(merged)).toEqual(['__proto__', 'constructor']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });
});

describe('applyChange', () => {
  it('merges top-level properties: null removes, others replace, the rest stay', () => {
    const stored = props({ a: 1, b: { x: 1, y: 2 }, c: 'keep' });
    const next = applyChange(stored, props({ a: null, b: { x: null }, d: [1] }));
    expect(plain(next)).toEqual({ b: { x: null }, c: 'keep', d: [1] });
    expect(plain(stored)).toEqual({ a: 1, b: { x: 1, y: 2 }, c: 'keep' });
  });

  it('starts from nothing for a new key and drops its nulls', () => {
    expect(plain(applyChange(undefined, props({ a: null, b: 2 })))).toEqual({ b: 2 });
  });
});
