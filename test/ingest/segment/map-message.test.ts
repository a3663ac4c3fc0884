import { mapSegmentMessage, type SegmentEnvelope } from '../../../src/ingest/segment/map-message';
import { snakeCase } from '../../../src/ingest/segment/context-columns';
import { basicWriteKey, segmentWriteKey } from '../../../src/ingest/segment/write-key';
import { ApiError } from '../../../src/core/errors';

const RECEIVED = '2026-11-29T12:00:00.000Z';
const envelope = (more: Partial<SegmentEnvelope> = {}): SegmentEnvelope => ({ receivedAt: RECEIVED, receivedAtMs: Date.parse(RECEIVED), timeZone: 'UTC', skewMs: 60_000, ...more });

function mapped(message: Record<string, unknown>, more: Partial<SegmentEnvelope> = {}) {
  const out = mapSegmentMessage(message, envelope(more));
  if (!out.ok) throw new Error(`refused: ${out.error.message}`);
  return out;
}

describe('ids', () => {
  test('messageId is the _id; one that cannot be an _id is hashed, stably', () => {
    expect(mapped({ type: 'track', event: 'e', userId: 'u', messageId: 'ajs-next-1-abc' }).fields._id).toBe('ajs-next-1-abc');
    const long = 'x'.repeat(200);
    const a = mapped({ type: 'track', event: 'e', userId: 'u', messageId: long });
    const b = mapped({ type: 'track', event: 'e', userId: 'u', messageId: long });
    expect(a.fields._id).toMatch(/^seg-[0-9a-f]{32}$/);
    expect(a.fields._id).toBe(b.fields._id);
    expect(mapped({ type: 'track', event: 'e', userId: 'u', messageId: 'with space' }).fields._id).toMatch(/^seg-/);
    expect(mapped({ type: 'track', event: 'e', userId: 'u' })).toMatchObject({ keyed: false });
  });

  test('_uid is userId, else anonymousId; anonymous_id is kept when both are sent; numbers are ids', () => {
    expect(mapped({ type: 'track', event: 'e', userId: 'u', anonymousId: 'a' }).fields).toMatchObject({ _uid: 'u', anonymous_id: 'a' });
    expect(mapped({ type: 'track', event: 'e', userId: '', anonymousId: 'a' }).fields).toMatchObject({ _uid: 'a' });
    expect(mapped({ type: 'track', event: 'e', userId: 42 }).fields._uid).toBe(42);
    expect(mapSegmentMessage({ type: 'track', event: 'e' }, envelope())).toMatchObject({ ok: false, error: { code: 'ERR_MISSING_FIELD', field: 'userId' } });
  });
});

describe('types', () => {
  test('the path decides the type of a single call', () => {
    expect(mapped({ type: 'identify', userId: 'u', event: 'x' }, { type: 'track' })).toMatchObject({ kind: 'event', fields: { _event: 'x' } });
  });

  test('unknown type, a track without event, and properties that are not an object are refused', () => {
    expect(mapSegmentMessage({ type: 'boom', userId: 'u' }, envelope())).toMatchObject({ ok: false, error: { field: 'type' } });
    expect(mapSegmentMessage({ type: 'track', userId: 'u' }, envelope())).toMatchObject({ ok: false, error: { field: 'event' } });
    expect(mapSegmentMessage({ type: 'track', userId: 'u', event: 'e', properties: [1] }, envelope())).toMatchObject({ ok: false, error: { field: 'properties' } });
    expect(mapSegmentMessage({ type: 'identify', userId: 'u', traits: 'x' }, envelope())).toMatchObject({ ok: false, error: { field: 'traits' } });
  });

  test('a property named code or kind is data, not an error', () => {
    expect(mapped({ type: 'identify', userId: 'u', traits: { code: 'X1', kind: 'k' } }).fields).toMatchObject({ code: 'X1', kind: 'k' });
  });

  test('identify merges context.traits under traits; one leading underscore is doubled', () => {
    const out = mapped({ type: 'identify', userId: 'u', traits: { plan: 'pro', _x: 1, __y: 2 }, context: { traits: { plan: 'free', email: 'e@x' } } });
    expect(out.kind).toBe('user');
    expect({ ...out.fields }).toEqual({ _uid: 'u', plan: 'pro', email: 'e@x', __x: 1, __y: 2 });
  });
});

describe('context', () => {
  test('flattened one level, named as Segment warehouses name the columns', () => {
    const out = mapped({
      type: 'track',
      event: 'e',
      userId: 'u',
      context: { page: { url: 'https://x/a', referrer: '' }, userAgent: 'UA', campaign: { source: 'g', name: 'spring' }, userAgentData: { brands: [{ brand: 'C' }] }, traits: { t: 1 }, ip: '1.2.3.4' },
    });
    expect(out.fields).toMatchObject({ context_page_url: 'https://x/a', context_page_referrer: '', context_user_agent: 'UA', context_campaign_source: 'g', context_campaign_name: 'spring', context_user_agent_data_brands: [{ brand: 'C' }], context_ip: '1.2.3.4' });
    expect(Object.keys(out.fields).some((k) => k.startsWith('context_traits'))).toBe(false);
  });

  test('the batch context is merged under the message one', () => {
    const out = mapped({ type: 'track', event: 'e', userId: 'u', context: { locale: 'fr' } }, { context: { locale: 'en', library: { name: 'go' } } });
    expect(out.fields).toMatchObject({ context_locale: 'fr', context_library_name: 'go' });
  });

  test('snake_case', () => {
    expect(['userAgent', 'adTrackingEnabled', 'IDFA', 'userAgentData', 'ip'].map(snakeCase)).toEqual(['user_agent', 'ad_tracking_enabled', 'idfa', 'user_agent_data', 'ip']);
  });
});

describe('sessions', () => {
  test("Amplitude's session plugin or RudderStack's context.sessionId names the session, once per device", () => {
    const amp = mapped({ type: 'page', anonymousId: 'a', integrations: { 'Actions Amplitude': { session_id: 1700000000000 } }, context: { page: { url: 'https://x/land', referrer: 'https://r' }, campaign: { source: 'news' }, locale: 'de-DE', screen: { width: 390, height: 844 } } });
    expect(amp.fields._sid).toBe('a:1700000000000');
    expect(amp.sessions).toHaveLength(1);
    expect({ ...amp.sessions![0]! }).toEqual({ _id: expect.stringMatching(/^seg-session-[0-9a-f]{32}$/), _sid: 'a:1700000000000', _uid: 'a', landing_page: 'https://x/land', referrer: 'https://r', utm_source: 'news', language: 'de-DE', screen: '390x844' });
    const rudder = mapped({ type: 'track', event: 'e', userId: 'u', anonymousId: 'a', context: { sessionId: 1700000000001 } });
    expect(rudder.fields._sid).toBe('a:1700000000001');
    // Known and anonymous: a second record gives the session to the user.
    expect(rudder.sessions!.map((s) => s._uid)).toEqual(['u', 'u']);
    expect(rudder.sessions![0]!._id).not.toBe(rudder.sessions![1]!._id);
    expect(mapped({ type: 'track', event: 'e', userId: 'u', integrations: { 'Actions Amplitude': { session_id: -1 } } }).sessions).toBeUndefined();
    expect(mapped({ type: 'identify', userId: 'u', context: { sessionId: 5 } }).sessions).toBeUndefined();
  });
});

describe('times', () => {
  test('the client time is kept when its clock is within the threshold', () => {
    const out = mapped({ type: 'track', event: 'e', userId: 'u', timestamp: '2026-11-29T11:59:50.000Z', sentAt: '2026-11-29T11:59:59.000Z' });
    expect(out.eventAt).toBe('2026-11-29T11:59:50.000Z');
    expect(out.fields.original_timestamp).toBeUndefined();
  });

  test('a clock two hours behind is corrected by receivedAt − sentAt, and the original kept', () => {
    const out = mapped({ type: 'track', event: 'e', userId: 'u', originalTimestamp: '2026-11-29T09:59:00+00:00', timestamp: 'ignored' }, { sentAtMs: Date.parse('2026-11-29T10:00:00.000Z') });
    expect(out.eventAt).toBe('2026-11-29T11:59:00.000Z');
    expect(out.fields.original_timestamp).toBe('2026-11-29T09:59:00+00:00');
  });

  test('years-old explicit times from a right clock are kept; unreadable ones fall back to the receive time', () => {
    expect(mapped({ type: 'track', event: 'e', userId: 'u', timestamp: '2019-03-01T08:00:00.123456789Z', sentAt: '2026-11-29T11:59:59Z' }).eventAt).toBe('2019-03-01T08:00:00.123Z');
    const bad = mapped({ type: 'track', event: 'e', userId: 'u', timestamp: 'yesterday' });
    expect(bad).toMatchObject({ eventAt: RECEIVED, fields: { original_timestamp: 'yesterday' } });
    expect(mapped({ type: 'track', event: 'e', userId: 'u' }).eventAt).toBe(RECEIVED);
  });
});

describe('write key', () => {
  const basic = (text: string) => `Basic ${Buffer.from(text).toString('base64')}`;
  test('Basic with or without the colon, else the root writeKey, else the first message', () => {
    expect(basicWriteKey(basic('key1:'))).toBe('key1');
    expect(basicWriteKey(basic('key1'))).toBe('key1');
    expect(basicWriteKey('Bearer x')).toBeUndefined();
    expect(segmentWriteKey(undefined, { writeKey: 'root' }, { writeKey: 'msg' })).toBe('root');
    expect(segmentWriteKey(undefined, {}, { writeKey: 'msg' })).toBe('msg');
    expect(segmentWriteKey('Bearer jwt', { writeKey: 'root' }, undefined)).toBe('root');
    expect(segmentWriteKey(undefined, {}, undefined)).toBeUndefined();
  });

  test('a header and a root key that differ are refused; an empty Basic user is refused', () => {
    expect(() => segmentWriteKey(basic('a:'), { writeKey: 'b' }, undefined)).toThrow(ApiError);
    expect(() => basicWriteKey(basic(':secret'))).toThrow(/empty write key/);
    expect(() => basicWriteKey('Basic !!!')).toThrow(ApiError);
  });
});

describe('odd ids', () => {
  test('messageIds with different lone surrogates stay apart; ids past 2^53 keep their digits', () => {
    const a = mapped({ type: 'track', event: 'e', userId: 'u', messageId: 'm\ud800' });
    const b = mapped({ type: 'track', event: 'e', userId: 'u', messageId: 'm\udbff' });
    expect(a.fields._id).not.toBe(b.fields._id);
    expect(mapped({ type: 'track', event: 'e', userId: 12345678901234567890n }).fields._uid).toBe('12345678901234567890');
  });
});
