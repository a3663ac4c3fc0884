import { createHmac } from 'node:crypto';
import { applyPrivacy, applyPrivacyToContext, hashValue, maskEmail, privacyPlan, truncateIp } from '../../src/core/records/privacy';
import { nullProtoObject, type Properties, type TrackedRecord } from '../../src/core/records/types';
import { describeIssues, TrackerSchema, type Tracker } from '../../src/core/trackers/types';
import type { PrivacyRule } from '../../src/core/trackers/privacy-rules';

const secret = 'a-test-secret-of-at-least-22-chars';
const tracker = (privacyRules: PrivacyRule[]): Tracker => TrackerSchema.parse({ id: 't', name: 't', tokens: [{ token: 'x'.repeat(22) }], privacyRules, privacySecret: secret });
const hmac = (text: string) => createHmac('sha256', secret).update(text).digest('hex');

function record(properties: Record<string, unknown>, extra: Partial<TrackedRecord> = {}): TrackedRecord {
  const props = nullProtoObject<Properties>();
  Object.assign(props, properties);
  return { kind: 'event', id: 'r1', receivedAt: '2026-01-01T00:00:00.000Z', event: 'e', properties: props, ...extra };
}

describe('truncate-ip', () => {
  test.each([
    ['203.0.113.77', '203.0.113.0'],
    [' 10.1.2.3 ', '10.1.2.0'],
    ['2001:db8:85a3:8d3:1319:8a2e:370:7348', '2001:db8:85a3::'],
    ['2001:0db8:0000::1', '2001:db8::'],
    ['2001:db8:0:1::', '2001:db8::'],
    ['0:1::5', '0:1::'],
    ['::1', '::'],
    ['fe80::1%eth0', 'fe80::'],
    ['::ffff:192.0.2.128', '::ffff:192.0.2.0'],
    ['::ffff:c000:280', '::ffff:192.0.2.0'],
    ['64:ff9b::192.0.2.33', '64:ff9b::'],
  ])('%s → %s', (ip, out) => expect(truncateIp(ip)).toBe(out));

  test.each(['not an ip', '999.1.1.1', '1.2.3', ''])('%j is not an IP', (text) => expect(truncateIp(text)).toBeUndefined());
});

describe('mask-email', () => {
  test.each([
    ['ada.lovelace@example.com', 'a***@example.com'],
    ['Ada@Example.COM', 'A***@example.com'],
    ['x@y', 'x***@y'],
    ['"a@b"@example.org', '"***@example.org'],
    ['émile@exämple.fr', 'é***@exämple.fr'],
  ])('%s → %s', (email, out) => expect(maskEmail(email)).toBe(out));

  test.each(['no-at-sign', '@example.com', 'ada@', 'ada lovelace@example.com', 'ada@exa mple.com'])('%j is not an e-mail', (text) => expect(maskEmail(text)).toBeUndefined());
});

test('hash is HMAC-SHA256 of the text, lowercase hex; non-strings hash their JSON; null stays null', () => {
  expect(hashValue('ada@example.com', secret)).toBe(hmac('ada@example.com'));
  expect(hashValue(42, secret)).toBe(hmac('42'));
  expect(hashValue({ a: [1, 'b'] }, secret)).toBe(hmac('{"a":[1,"b"]}'));
  expect(hashValue(null, secret)).toBeNull();
});

test('hash takes an integer beyond 2^53 as its digits: the same HMAC as the id sent as a string', () => {
  expect(hashValue(603851970716743426n, secret)).toBe(hmac('603851970716743426'));
  expect(hashValue({ ids: [-98765432109876543210n, 1] }, secret)).toBe(hmac('{"ids":[-98765432109876543210,1]}'));
  const r = record({ customer: { id: 603851970716743426n }, keep: 12345678901234567890n }, { uid: '603851970716743426' });
  applyPrivacy(r, privacyPlan(tracker([{ property: '/customer/id', action: 'hash' }, { property: '_uid', action: 'hash' }])));
  expect(r.properties).toEqual({ customer: { id: hmac('603851970716743426') }, keep: 12345678901234567890n });
  expect(r.uid).toBe(hmac('603851970716743426'));
});

describe('applyPrivacy', () => {
  test('top-level names, pointers, * segments and reserved fields', () => {
    const plan = privacyPlan(
      tracker([
        { property: 'email', action: 'mask-email' },
        { property: 'password', action: 'drop' },
        { property: '/address/street', action: 'drop' },
        { property: '/contacts/*/phone', action: 'hash' },
        { property: '/a~1b/c~0d', action: 'hash' },
        { property: '/tags/1', action: 'drop' },
        { property: 'ip', action: 'truncate-ip' },
        { property: '_uid', action: 'hash' },
        { property: '_sid', action: 'hash' },
      ]),
    );
    const r = record(
      {
        email: 'ada@example.com',
        password: 'hunter2',
        address: { street: '1 Main St', city: 'Paris' },
        contacts: [{ phone: '+33 1' }, { name: 'no phone' }, 'text'],
        'a/b': { 'c~d': 'x' },
        tags: ['keep', 'drop', 'keep'],
        ip: '198.51.100.9',
        other: 'kept',
      },
      { uid: 'ada@example.com', sid: 's-1' },
    );
    applyPrivacy(r, plan);
    expect(r.uid).toBe(hmac('ada@example.com'));
    expect(r.sid).toBe(hmac('s-1'));
    expect({ ...r.properties }).toEqual({
      email: 'a***@example.com',
      address: { city: 'Paris' },
      contacts: [{ phone: hmac('+33 1') }, { name: 'no phone' }, 'text'],
      'a/b': { 'c~d': hmac('x') },
      tags: ['keep', null, 'keep'],
      ip: '198.51.100.0',
      other: 'kept',
    });
  });

  test('a value the action cannot read is dropped, never kept raw', () => {
    const plan = privacyPlan(tracker([{ property: 'email', action: 'mask-email' }, { property: 'ip', action: 'truncate-ip' }, { property: '/list/*', action: 'mask-email' }]));
    const r = record({ email: 'not an e-mail', ip: { v4: '1.2.3.4' }, list: ['a@b.c', 42] });
    applyPrivacy(r, plan);
    expect({ ...r.properties }).toEqual({ list: ['a***@b.c', null] });
  });

  test('absent properties and paths through scalars are left alone', () => {
    const plan = privacyPlan(tracker([{ property: '/a/b/c', action: 'drop' }, { property: 'missing', action: 'hash' }]));
    const r = record({ a: { b: 'scalar' } });
    applyPrivacy(r, plan);
    expect({ ...r.properties }).toEqual({ a: { b: 'scalar' } });
  });

  test('records sharing a nested value each get it changed once', () => {
    const plan = privacyPlan(tracker([{ property: '/billing/email', action: 'hash' }]));
    const shared = { email: 'ada@example.com', country: 'FR' };
    const a = record({ billing: shared });
    const b = record({ billing: shared });
    applyPrivacy(a, plan);
    applyPrivacy(b, plan);
    expect(a.properties.billing).toEqual({ email: hmac('ada@example.com'), country: 'FR' });
    expect(b.properties.billing).toEqual({ email: hmac('ada@example.com'), country: 'FR' });
  });

  test('__proto__ is plain data on the way down', () => {
    const plan = privacyPlan(tracker([{ property: '/__proto__/email', action: 'drop' }]));
    const r = record(JSON.parse('{"__proto__": {"email": "x@y.z", "keep": 1}}') as Record<string, unknown>);
    applyPrivacy(r, plan);
    expect(JSON.stringify(r.properties)).toBe('{"__proto__":{"keep":1}}');
    expect(({} as Record<string, unknown>).keep).toBeUndefined();
  });

  test('the captured IP is treated once per request', () => {
    const plan = privacyPlan(tracker([{ property: '_ip', action: 'truncate-ip' }]));
    const context = { ip: '::ffff:127.0.0.1', userAgent: 'ua' };
    applyPrivacyToContext(context, plan);
    expect(context).toEqual({ ip: '::ffff:127.0.0.0', userAgent: 'ua' });
  });

  test('a plan is built once per tracker object', () => {
    const t = tracker([{ property: 'email', action: 'hash' }]);
    expect(privacyPlan(t)).toBe(privacyPlan(t));
  });
});

describe('rules are checked, and a refusal names the rule', () => {
  const refusal = (privacyRules: unknown[]): string => {
    const parsed = TrackerSchema.safeParse({ id: 't', name: 't', tokens: [{ token: 'x'.repeat(22) }], privacyRules });
    expect(parsed.success).toBe(false);
    return describeIssues(parsed.error!);
  };

  test.each([
    [[{ property: 'email', action: 'encrypt' }], /privacyRules\.0\.action: an action is drop, hash, truncate-ip, mask-email/],
    [[{ property: '', action: 'drop' }], /privacyRules\.0\.property: a rule needs a property/],
    [[{ property: 'email', action: 'drop' }, { property: '/email', action: 'hash' }], /privacyRules\.1\.property: rule \/email → hash: rule 0 already applies to \/email/],
    [[{ property: '_event', action: 'hash' }], /privacyRules\.0\.property: rule _event → hash: _event is a reserved field/],
    [[{ property: '_uid', action: 'drop' }], /rule _uid → drop: _uid takes hash, not drop/],
    [[{ property: '_ip', action: 'mask-email' }], /rule _ip → mask-email: _ip takes drop or hash or truncate-ip, not mask-email/],
    [[{ property: '/a~2b', action: 'drop' }], /rule \/a~2b → drop: \/a~2b is not a JSON pointer/],
    [[{ property: 'email', action: 'hash', extra: 1 }], /privacyRules\.0/],
  ])('%j', (rules, message) => expect(refusal(rules)).toMatch(message));

  test('at most 100 rules', () => {
    expect(refusal(Array.from({ length: 101 }, (_, i) => ({ property: `p${i}`, action: 'drop' })))).toMatch(/at most 100 personal-data rules/);
  });

  test('a tracker with hash rules and no secret is refused at apply time, not hashed with an empty key', () => {
    const t = TrackerSchema.parse({ id: 't', name: 't', tokens: [{ token: 'x'.repeat(22) }], privacyRules: [{ property: 'email', action: 'hash' }] });
    expect(() => privacyPlan(t)).toThrow(/no privacySecret/);
  });
});
