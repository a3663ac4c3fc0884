import { readFileSync } from 'node:fs';
import path from 'node:path';
import { compileRules, type RuleVerdict } from '../../src/core/rules/compile';
import { compileFilter, isFilterProblem, type CompiledFilter } from '../../src/core/rules/filter';
import { sampledIn } from '../../src/core/rules/sample';
import { DestinationRulesSchema, type DestinationRules } from '../../src/core/rules/schema';
import { compileShape, type FlattenOptions } from '../../src/core/rules/shape';
import type { Properties } from '../../src/core/records/types';
import { describeIssues, DestinationSchema } from '../../src/core/trackers/types';
import type { TrackedRecord } from '../../src/core/records/types';
import { event, props, session, user } from '../helpers/record-builders';

function filter(text: string): CompiledFilter {
  const compiled = compileFilter(text);
  if (isFilterProblem(compiled)) throw new Error(`${text}: ${compiled.message}`);
  return compiled;
}

const matched = (f: CompiledFilter, r: TrackedRecord) => f.test(r);

describe('filter', () => {
  const order = event('order', { total: 42.5, currency: 'EUR', 'plan name': 'pro', address: { city: 'Lyon' }, tags: ['a', 'b'] }, { uid: 'u1' });
  const pageView = event('page_view', { path: '/' });
  const alice = user('alice', { plan: 'free' });

  test('the examples of docs/rules.md work as written', () => {
    const signupsAndOrders = filter("_type == 'event' && _event in ['signup', 'order']");
    expect(matched(signupsAndOrders, order)).toEqual({ matched: true });
    expect(matched(signupsAndOrders, pageView)).toEqual({ matched: false });
    expect(matched(signupsAndOrders, alice)).toEqual({ matched: false });

    const bigOrders = filter("_type != 'event' || total >= 10");
    expect(matched(bigOrders, order)).toEqual({ matched: true });
    expect(matched(bigOrders, event('order', { total: 3 }))).toEqual({ matched: false });
    // A user has no total, and needs none: the left side decides.
    expect(matched(bigOrders, alice)).toEqual({ matched: true });
  });

  test('every filter docs/rules.md shows compiles and runs on a record without an error', () => {
    const page = readFileSync(path.join(__dirname, '..', '..', 'docs', 'rules.md'), 'utf8');
    // The block of CEL examples (comments after #), and each --filter of the shell examples.
    const block = /Examples that work as written:\n\n```\n([\s\S]*?)```/.exec(page)?.[1];
    expect(block).toBeDefined();
    const examples = block!.split('\n').map((line) => line.replace(/\s+#.*$/, '').trim()).filter(Boolean);
    const flags = [...page.matchAll(/--filter "([^"]+)"/g)].map((m) => m[1]!);
    expect(examples.length).toBeGreaterThanOrEqual(6);
    expect(flags.length).toBeGreaterThanOrEqual(3);
    for (const text of [...examples, ...flags]) {
      const verdict = matched(filter(text), order);
      expect({ text, error: 'error' in verdict ? verdict.error : undefined }).toEqual({ text, error: undefined });
    }
  });

  test('reserved fields, properties, nested values and the record as a map', () => {
    expect(matched(filter("_uid == 'u1' && _id.size() > 0 && _received_at.startsWith('2026')"), order)).toEqual({ matched: true });
    expect(matched(filter("address.city == 'Lyon' && 'b' in tags"), order)).toEqual({ matched: true });
    expect(matched(filter("record['plan name'] == 'pro'"), order)).toEqual({ matched: true });
    expect(matched(filter('has(record.coupon)'), order)).toEqual({ matched: false });
    expect(matched(filter("record.?coupon.orValue('none') == 'none'"), order)).toEqual({ matched: true });
    // A reserved field the record's kind does not have is null, not an error.
    expect(matched(filter("_event == 'signup'"), alice)).toEqual({ matched: false });
  });

  test('a missing property or a type mismatch is an error, not a match', () => {
    expect(matched(filter('total > 10'), pageView)).toEqual({ error: expect.stringMatching(/Unknown variable: total/) });
    expect(matched(filter("total > 'ten'"), order)).toEqual({ error: expect.stringMatching(/no such overload/) });
    // Names of Object.prototype are not properties of a record that has none.
    expect(matched(filter('constructor == 1'), order)).toEqual({ error: expect.stringMatching(/Unknown variable: constructor/) });
  });

  test('integers beyond 2^53 stay exact and compare with literals', () => {
    const big = event('order', { id: 603851970716743426n });
    expect(matched(filter('id == 603851970716743426'), big)).toEqual({ matched: true });
    expect(matched(filter('id == 603851970716743427'), big)).toEqual({ matched: false });
  });

  test.each([
    ["_type == 'event' &&", 20, /Unexpected token/],
    ['total >', 8, /Unexpected token/],
    ['1 + 2', 1, /true or false.*int/],
    ["'unterminated", 1, /./],
  ])('refuses %p, saying where', (text, column, message) => {
    const compiled = compileFilter(text);
    expect(isFilterProblem(compiled)).toBe(true);
    expect(compiled).toMatchObject({ column, message: expect.stringMatching(message) });
  });
});

const flattenProperties = (properties: Properties, flatten: FlattenOptions) => compileShape({ flatten })!(properties);

describe('shape', () => {
  test('flatten joins nested names with _, leaves arrays as they are, and an explicit property wins', () => {
    const flat = flattenProperties(props({ address: { city: 'Lyon', geo: { lat: 45.7 } }, tags: [{ a: 1 }], address_city: 'explicit', empty: {} }), { separator: '_', depth: 10 });
    expect({ ...flat }).toEqual({ address_city: 'explicit', address_geo_lat: 45.7, tags: [{ a: 1 }], empty: {} });
    expect({ ...flattenProperties(props({ a: { b: { c: 1 } } }), { separator: '.', depth: 1 }) }).toEqual({ 'a.b': { c: 1 } });
  });

  test('keep, drop and rename, after flattening; reserved fields untouched', () => {
    const record = event('order', { total: 10, email: 'a@b.c', utm_source: 'x', utm_medium: 'y', address: { city: 'Lyon' } }, { uid: 'u1' });
    const kept = compileRules({ flatten: true, keep: ['total', 'utm_*', 'address_city'], rename: { address_city: 'city', total: 'amount' } }).apply(record);
    expect(kept.kind).toBe('deliver');
    const delivered = (kept as Extract<RuleVerdict, { kind: 'deliver' }>).record;
    expect({ ...delivered.properties }).toEqual({ amount: 10, utm_source: 'x', utm_medium: 'y', city: 'Lyon' });
    expect(delivered).toMatchObject({ kind: 'event', id: record.id, uid: 'u1', event: 'order', eventAt: record.eventAt });
    // The record as accepted is not changed.
    expect(record.properties.email).toBe('a@b.c');

    const dropped = compileRules({ drop: ['email', 'utm_*'] }).apply(record) as Extract<RuleVerdict, { kind: 'deliver' }>;
    expect(Object.keys(dropped.record.properties)).toEqual(['total', 'address']);
  });

  test('a renamed property replaces one that had its new name', () => {
    const out = compileRules({ rename: { amount_cents: 'amount' } }).apply(event('order', { amount: 1, amount_cents: 100 })) as Extract<RuleVerdict, { kind: 'deliver' }>;
    expect({ ...out.record.properties }).toEqual({ amount: 100 });
  });

  test('no rules give the record itself', () => {
    const record = event('x', {});
    expect(compileRules({}).apply(record)).toEqual({ kind: 'deliver', record });
  });
});

describe('sample', () => {
  test('deterministic by _uid: a user is in or out with every record, near the rate overall', () => {
    const users = Array.from({ length: 10_000 }, (_, i) => `user-${i}`);
    const inside = users.filter((uid) => sampledIn(event('e', {}, { uid }), 0.1, undefined));
    expect(inside.length).toBeGreaterThan(900);
    expect(inside.length).toBeLessThan(1100);
    for (const uid of users.slice(0, 200)) {
      const verdicts = new Set([event('a', {}, { uid }), event('b', {}, { uid }), session('s', {}, uid), user(uid, {})].map((r) => sampledIn(r, 0.1, undefined)));
      expect(verdicts.size).toBe(1);
    }
  });

  test('by a property, else by _id', () => {
    const a = event('e', { account: 'acme' });
    const b = event('e', { account: 'acme' });
    expect(sampledIn(a, 0.5, 'account')).toBe(sampledIn(b, 0.5, 'account'));
    expect(compileRules({ sample: { rate: 1 } }).apply(a).kind).toBe('deliver');
  });
});

describe('validation', () => {
  const refusal = (rules: unknown) => {
    const parsed = DestinationRulesSchema.safeParse(rules);
    return parsed.success ? undefined : describeIssues(parsed.error, 'rules');
  };

  test('accepts every rule together', () => {
    const rules: DestinationRules = { filter: "_event == 'order'", sample: { rate: 0.5, by: 'account' }, keep: ['total'], rename: { total: 'amount' }, flatten: { separator: '.', depth: 2 } };
    expect(refusal(rules)).toBeUndefined();
    expect(DestinationSchema.parse({ id: 'sheet', type: 'local', rules }).rules).toEqual(rules);
  });

  test.each([
    [{ filter: "_event == 'order' &&" }, /rules\.filter: at column 21: Unexpected token/],
    [{ filter: '' }, /rules\.filter: the filter is empty/],
    [{ rename: { total: '_uid' } }, /rules\.rename\.total: total=_uid: _uid is a reserved name/],
    [{ rename: { a: 'x', b: 'X' } }, /b=X and a=X rename two properties onto one name/],
    [{ rename: { _event: 'name' } }, /_event is a reserved field and cannot be renamed/],
    [{ keep: ['a'], drop: ['b'] }, /not both/],
    [{ keep: ['_uid', 'total'] }, /_uid is a reserved field, which always goes/],
    [{ sample: { rate: 0 } }, /rules\.sample\.rate: a sample rate is above 0/],
    [{ sample: { rate: 1.5 } }, /at most 1/],
    [{ flatten: { depth: 0 } }, /rules\.flatten/],
    [{ colour: 'red' }, /rules: Unrecognized key/],
  ])('refuses %p', (rules, message) => {
    expect(refusal(rules)).toMatch(message);
  });
});
