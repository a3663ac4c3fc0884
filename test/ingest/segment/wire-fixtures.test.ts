import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { startTestApi, type TestApi } from '../../helpers/api';
import { json, listen, type Listening, type RawRequest } from '../../helpers/raw-http';

/**
 * WIRE FIXTURES, NOT REAL CLIENTS. The Segment SDKs that cannot be installed here (no PyPI, Go
 * proxy, RubyGems, Maven, Swift, Android or React Native toolchain) are stood in for by one request
 * each, written by hand from the SDK's source: `fixtures/<sdk>.json`, whose `source` names the
 * files read (keys as in the research notes on Segment's HTTP API). The request is replayed as
 * the SDK sends it — path, headers, gzip, chunked body, the SDK's own time formats — and each SDK's
 * reading of the answer is checked: analytics-python counts only a 200 and drops a 4xx only when
 * its JSON has `code` and `message`; analytics-java reads `success` from a JSON body;
 * analytics-ruby parses every body as JSON; go, swift, kotlin and React Native take any 2xx.
 * A real SDK release may differ from these fixtures.
 */

const SDKS = ['analytics-python', 'analytics-go', 'analytics-ruby', 'analytics-java', 'analytics-swift', 'analytics-kotlin', 'analytics-react-native'] as const;
type Sdk = (typeof SDKS)[number];

type Message = Record<string, unknown> & { messageId: string; type: string; timestamp?: string };
interface Fixture {
  fixture: string;
  sdk: string;
  version: string;
  source: string[];
  request: { method: string; path: string; headers: Record<string, string>; gzip?: boolean; chunked?: boolean; body: { batch: Message[]; sentAt: string } & Record<string, unknown> };
  expect: Array<Record<string, unknown>>;
}

const fixture = (sdk: Sdk): Fixture => JSON.parse(readFileSync(path.join(__dirname, 'fixtures', `${sdk}.json`), 'utf8')) as Fixture;

let api: TestApi;
let raw: Listening;
beforeAll(async () => {
  api = await startTestApi();
  raw = await listen(api.runtime.app);
});
afterAll(async () => {
  await raw.close();
  await api.close();
});

const storedFor = async (trackerId: string) => (await api.storedRecords()).filter((r) => r.trackerId === trackerId);

const TIME = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)$/;
const TIME_KEYS = new Set(['timestamp', 'originalTimestamp', 'sentAt']);

/**
 * A time moved by whole seconds in the SDK's own text: the same fraction digits (Go's trimmed
 * nanoseconds, Ruby's microseconds) and the same offset (`Z`, Python's `+00:00`, a local `+01:00`).
 */
function shiftTime(text: string, seconds: number): string {
  const m = TIME.exec(text);
  if (!m) throw new Error(`not a fixture time: ${text}`);
  const [, wall, fraction = '', zone] = m as unknown as [string, string, string | undefined, string];
  // The offset stays, so the wall clock moves by the same seconds as the instant.
  return `${new Date(Date.parse(`${wall}Z`) + seconds * 1000).toISOString().slice(0, 19)}${fraction}${zone}`;
}

function shiftTimes(value: unknown, seconds: number): void {
  if (typeof value !== 'object' || value === null) return;
  for (const [key, item] of Object.entries(value)) {
    if (TIME_KEYS.has(key) && typeof item === 'string') (value as Record<string, unknown>)[key] = shiftTime(item, seconds);
    else shiftTimes(item, seconds);
  }
}

const basicAuth = (key: string) => `Basic ${Buffer.from(`${key}:`).toString('base64')}`;

interface Wire {
  /** The body as sent, its times moved to the relay's clock (less `behindMs`). */
  body: Fixture['request']['body'];
  /** A fresh request with the same bytes each call (a chunked body is a stream, read once). */
  request: () => RawRequest;
}

/**
 * The fixture's request for `key`, its times moved so that `sentAt` is the relay's clock less
 * `behindMs`: the device clock `behindMs` slow. `edit` changes the body before it is encoded.
 */
function wire(fx: Fixture, key: string, behindMs = 0, edit?: (body: Fixture['request']['body']) => void): Wire {
  const body = JSON.parse(JSON.stringify(fx.request.body).replaceAll('{{writeKey}}', key)) as Fixture['request']['body'];
  shiftTimes(body, Math.round((Date.now() - behindMs - Date.parse(body.sentAt)) / 1000));
  edit?.(body);
  const text = Buffer.from(JSON.stringify(body));
  const bytes = fx.request.gzip ? gzipSync(text) : text;
  const headers = Object.fromEntries(Object.entries(fx.request.headers).map(([name, value]) => [name, value.replace('{{basicAuth}}', basicAuth(key))]));
  return {
    body,
    request: () => ({
      method: fx.request.method,
      path: fx.request.path,
      headers,
      // HttpURLConnection's chunked streaming mode: no Content-Length, the body in pieces.
      body: fx.request.chunked ? Readable.from([bytes.subarray(0, bytes.length >> 1), bytes.subarray(bytes.length >> 1)]) : bytes,
    }),
  };
}

/** What a 4xx must look like for every SDK: JSON, `code` and `message` at the top (python), `success: false`, v3's `error`. */
function expectSegmentError(res: Awaited<ReturnType<Listening['request']>>, status: number, code: string): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = json(res) as Record<string, unknown>;
  expect(body).toMatchObject({ success: false, code, message: expect.any(String), error: { code, message: expect.any(String) } });
}

describe.each(SDKS)('%s (fixture)', (sdk) => {
  const fx = fixture(sdk);

  test('names its sources and says it is a fixture', () => {
    expect(fx.sdk).toBe(sdk);
    expect(fx.fixture).toMatch(/^FIXTURE written by hand from the SDK's source, not captured from a real client/);
    expect(fx.source.length).toBeGreaterThan(0);
    expect(fx.source.some((s) => /^\[[A-Z]+\d\]/.test(s))).toBe(true);
  });

  test('200 with {success: true}; stored as the messages say, _id = messageId; a replay stores nothing new', async () => {
    const { tracker, token } = await api.addTracker();
    const sent = wire(fx, token);
    const messages = sent.body.batch;

    const res = await raw.request(sent.request());
    // python: exactly 200; java: a JSON body with success; ruby: JSON.parse on the body.
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(json(res)).toEqual({ success: true, accepted: messages.length, rejected: 0 });

    const stored = await storedFor(tracker.id);
    expect(stored).toMatchObject(fx.expect);
    expect(stored.filter((r) => r.kind !== 'session').map((r) => r.id)).toEqual(messages.map((m) => m.messageId));
    // The device clock agrees with the relay's: every event at its own timestamp, in any of the SDKs' formats.
    for (const r of stored.filter((s) => s.kind === 'event')) {
      const message = messages.find((m) => m.messageId === r.id)!;
      expect(r.eventAt).toBe(new Date(message.timestamp!).toISOString());
      expect(r.properties.original_timestamp).toBeUndefined();
    }
    expect(JSON.stringify(stored)).not.toContain(token);

    const again = await raw.request(sent.request());
    expect(again.status).toBe(200);
    expect(json(again)).toEqual({ success: true, accepted: 0, duplicates: messages.length, rejected: 0 });
    expect(await storedFor(tracker.id)).toHaveLength(stored.length);
  });

  test('an unknown write key: 401 JSON with code and message at the top, nothing stored', async () => {
    const { tracker } = await api.addTracker();
    const res = await raw.request(wire(fx, 'wk_unknown_0123456789').request());
    expectSegmentError(res, 401, 'ERR_INVALID_TOKEN');
    expect(await storedFor(tracker.id)).toEqual([]);
  });
});

describe('transport variants', () => {
  test('analytics-python with gzip=False (its default): the same batch, plain JSON', async () => {
    const { tracker, token } = await api.addTracker();
    const fx = fixture('analytics-python');
    const plain: Fixture = { ...fx, request: { ...fx.request, gzip: false, headers: { 'Content-Type': 'application/json', 'User-Agent': 'analytics-python/2.3.4' } } };
    const res = await raw.request(wire(plain, token).request());
    expect(res.status).toBe(200);
    expect((await storedFor(tracker.id)).map((r) => r.id)).toEqual(fx.request.body.batch.map((m) => m.messageId));
  });

  test.each(['analytics-python', 'analytics-kotlin'] as const)('%s: a gzip body cut short is a 400 with code and message (dropped, not retried)', async (sdk) => {
    const { tracker, token } = await api.addTracker();
    const request = wire(fixture(sdk), token).request();
    const whole = Buffer.isBuffer(request.body) ? request.body : Buffer.concat(await (request.body as Readable).toArray());
    const res = await raw.request({ ...request, body: whole.subarray(0, whole.length - 12) });
    expectSegmentError(res, 400, 'ERR_MALFORMED_ENCODING');
    expect(await storedFor(tracker.id)).toEqual([]);
  });
});

describe('device clocks (sentAt against the relay’s receive time)', () => {
  const eventsOf = async (trackerId: string) => (await storedFor(trackerId)).filter((r) => r.kind === 'event');

  test('analytics-swift, phone clock 2 hours slow: each event moved by receivedAt − sentAt, its own text kept as original_timestamp', async () => {
    const { tracker, token } = await api.addTracker();
    const sent = wire(fixture('analytics-swift'), token, 2 * 3_600_000);
    expect((await raw.request(sent.request())).status).toBe(200);
    const events = await eventsOf(tracker.id);
    expect(events).toHaveLength(2);
    for (const r of events) {
      const message = sent.body.batch.find((m) => m.messageId === r.id)!;
      const skew = Date.parse(r.receivedAt) - Date.parse(sent.body.sentAt);
      expect(skew).toBeGreaterThan(2 * 3_600_000 - 5_000);
      expect(r.eventAt).toBe(new Date(Date.parse(message.timestamp!) + skew).toISOString());
      expect(r.properties.original_timestamp).toBe(message.timestamp);
      // Back on the relay's clock: a few seconds before the batch was received, as on the phone.
      expect(Date.parse(r.receivedAt) - Date.parse(r.eventAt!)).toBeGreaterThanOrEqual(0);
      expect(Date.parse(r.receivedAt) - Date.parse(r.eventAt!)).toBeLessThan(10_000);
    }
  });

  test('analytics-swift, phone clock 30 s slow (within SEGMENT_CLOCK_SKEW_SECONDS): times kept as sent', async () => {
    const { tracker, token } = await api.addTracker();
    const sent = wire(fixture('analytics-swift'), token, 30_000);
    expect((await raw.request(sent.request())).status).toBe(200);
    const events = await eventsOf(tracker.id);
    expect(events).toHaveLength(2);
    for (const r of events) {
      const message = sent.body.batch.find((m) => m.messageId === r.id)!;
      expect(r.eventAt).toBe(new Date(message.timestamp!).toISOString());
      expect(r.properties.original_timestamp).toBeUndefined();
    }
  });

  test('analytics-python backfill: an explicit timestamp years old is kept (the server clock is right)', async () => {
    const { tracker, token } = await api.addTracker();
    const sent = wire(fixture('analytics-python'), token, 0, (body) => {
      body.batch[1]!.timestamp = '2019-03-01T12:00:00.000+00:00';
    });
    expect((await raw.request(sent.request())).status).toBe(200);
    const order = (await eventsOf(tracker.id)).find((r) => r.event === 'Order Completed')!;
    expect(order.eventAt).toBe('2019-03-01T12:00:00.000Z');
    expect(order.properties.original_timestamp).toBeUndefined();
  });
});
