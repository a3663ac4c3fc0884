import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { ERROR_CODES, type ErrorCode } from '../../../src/core/errors';
import { hasUnsafeIntegerLiteral, parseExactJson } from '../../../src/core/records/exact-json';
import { CLIENT_KEY_PATTERN } from '../../../src/core/records/normalize';
import { SEGMENT_LIMITS } from '../../../src/ingest/segment/limits';
import { hashedKey } from '../../../src/ingest/segment/map-message';
import { startTestApi, type TestApi } from '../../helpers/api';
import { json, listen, type Listening, type RawRequest, type RawResponse } from '../../helpers/raw-http';
import { seededRandom } from '../../helpers/seeded-random';

/**
 * Segment's `/v1` under fuzzed bodies, seeded so that a failure names the case that reproduces it
 * (`FUZZ_SEED=7 FUZZ_CASES=5000 npx jest test/ingest/segment/fuzz`). Every answer: never a 5xx,
 * every 4xx JSON with `code` and `message` at the top. Most cases are batches whose messages are
 * each built valid or with one known flaw: the answer must list exactly the flawed ones in
 * `errors` (by index, with their code) and count the rest as `accepted`; at the end every
 * message answered as stored is in the queue once, no refused one is, and the queue holds as
 * many messages as the answers accepted.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 0x5e6d);
const CASES = Number(process.env.FUZZ_CASES ?? 2000);
const PARALLEL = 8;

type Json = Record<string, unknown>;
/** How one message must come out: stored, refused with this code (`*`: any), or either. */
type Outcome = 'valid' | 'either' | { code: ErrorCode | '*' };
interface Sent {
  outcome: Outcome;
  /** The `_id` it is stored under when keyed by its messageId; undefined for a fresh one. */
  id?: string;
  /** The index of the message this one repeats in the same batch. */
  copyOf?: number;
}
type Expect = { kind: 'batch'; trackerKey: string; messages: Sent[] } | { kind: 'single'; trackerKey: string; message: Sent } | { kind: 'refused'; code: ErrorCode } | { kind: 'any' };
interface Case {
  i: number;
  label: string;
  make: () => RawRequest;
  expect: Expect;
  /** The body text before encoding, when it is JSON that the answer can be checked against. */
  text?: string;
  /**
   * Another answer that is right too: a body with an integer past 2^53 is parsed by lossless-json,
   * which recurses, so nesting thousands deep there is refused whole as too deep.
   */
  alt?: ErrorCode;
}

/** A value written into the JSON text as it is: deep nesting JSON.stringify cannot write, raw numbers. */
class RawJson {
  constructor(readonly text: string) {}
}
const MARK = '@@fz-8b1f@@';

/** JSON text with bigints as bare digits and RawJson values as given. */
function encode(value: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'bigint') return `${MARK}${raws.push(v.toString()) - 1}${MARK}`;
    if (v instanceof RawJson) return `${MARK}${raws.push(v.text) - 1}${MARK}`;
    return v;
  });
  return text.replace(new RegExp(`"${MARK}(\\d+)${MARK}"`, 'g'), (_m, n: string) => raws[Number(n)]!);
}

/** An own `__proto__` key, as JSON.parse makes one (an object literal would set the prototype). */
function withOwn(target: Json, key: string, value: unknown): Json {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  return target;
}

const basic = (key: string) => `Basic ${Buffer.from(`${key}:`).toString('base64')}`;
const TYPES = ['identify', 'track', 'page', 'screen', 'group', 'alias'] as const;
type SegType = (typeof TYPES)[number];
const SINGLE_PATHS: ReadonlyArray<readonly [string, SegType]> = [
  ['/v1/identify', 'identify'], ['/v1/track', 'track'], ['/v1/page', 'page'], ['/v1/screen', 'screen'], ['/v1/group', 'group'], ['/v1/alias', 'alias'],
  ['/v1/i', 'identify'], ['/v1/t', 'track'], ['/v1/p', 'page'], ['/v1/s', 'screen'], ['/v1/g', 'group'], ['/v1/a', 'alias'],
];
const BATCH_PATHS = ['/v1/batch', '/v1/b', '/v1/import', '/v1/import/'];

interface Keys {
  main: string;
  replace: string;
  other: string;
}

function generator(rand: () => number, keys: Keys) {
  /** The deepest nesting written into the case being built. */
  let deepest = 0;
  const deep = (depth: number) => {
    deepest = Math.max(deepest, depth);
    return new RawJson(`${'['.repeat(depth)}${']'.repeat(depth)}`);
  };
  // The exact-integer parser (a body holding an integer past 2^53) recurses: thousands of levels
  // deep, the whole body is refused as too deep, the one thing that fails a batch whole.
  const altOf = (text: string): ErrorCode | undefined => (deepest >= 3000 && hasUnsafeIntegerLiteral(text) ? 'ERR_TOO_DEEP' : undefined);
  const int = (n: number) => Math.floor(rand() * n);
  const chance = (p: number) => rand() < p;
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  const printable = (n: number) => String.fromCharCode(...Array.from({ length: n }, () => 0x20 + int(95)));
  const WORDS = ['café', 'naïve', '日本語', 'עברית', '🎉', 'tab\there', 'line\nbreak', 'nul\u0000', 'q"uote\\', '<b>', '%s%n', '\u2028', 'Ω≈ç√'];
  const text = (n: number) => Array.from({ length: n }, () => (chance(0.8) ? printable(1 + int(6)) : pick(WORDS))).join('');
  const idText = () => (chance(0.6) ? `${pick(['user', 'anon', 'ÿ', '🙂', 'id'])}-${printable(1 + int(20))}` : String(int(1e9)));
  const iso = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();
  const KEYS = ['plan', 'total', 'constructor', 'toString', '_private', '__typename', '', 'a.b', 'with space', 'ключ', '🎯', 'valueOf', 'hasOwnProperty'];

  const scalar = (): unknown => pick([() => text(int(20)), () => rand() * 1e6 - 5e5, () => int(2 ** 31), () => pick([true, false, null, 0, -0, 1e308, -1e-308]), () => 12345678901234567890n + BigInt(int(1e6))])();
  const data = (depth: number): Json => {
    const o: Json = {};
    for (let n = int(6); n > 0; n--) {
      const key = chance(0.8) ? pick(KEYS) : text(1 + int(4));
      const value = depth < 3 && chance(0.3) ? (chance(0.5) ? data(depth + 1) : [scalar(), data(depth + 1)]) : scalar();
      if (chance(0.05)) withOwn(o, '__proto__', value);
      else o[key] = value;
    }
    return o;
  };

  /** A message every rule accepts, for the tracker that owns `key`. */
  const validMessage = (type: SegType, messageId: unknown, key?: string): Json => {
    const m: Json = { type };
    const who = pick(['user', 'anon', 'both', 'python', 'kotlin'] as const);
    if (who === 'user' || who === 'both' || who === 'python') m.userId = chance(0.8) ? idText() : pick([42, 1.5, -7]);
    if (who === 'anon' || who === 'both' || who === 'kotlin') m.anonymousId = idText();
    if (who === 'python') m.anonymousId = null;
    if (who === 'kotlin') m.userId = '';
    if (messageId !== undefined) m.messageId = messageId;
    if (type === 'track') m.event = chance(0.9) ? text(1 + int(12)) : 'e'.repeat(256);
    if (type === 'identify' || type === 'group') m.traits = chance(0.8) ? data(0) : pick([null, undefined]);
    if (type !== 'identify' && chance(0.8)) m.properties = chance(0.9) ? data(0) : null;
    if (type === 'page' || type === 'screen') {
      if (chance(0.7)) m.name = pick([text(8), null, 5, { a: 1 }]);
      if (chance(0.3)) m.category = pick([text(5), null]);
    }
    if (type === 'group') m.groupId = pick([idText(), 77, null, { org: 1 }]);
    if (type === 'alias') m.previousId = pick([idText(), 12, null]);
    if (chance(0.6)) {
      const context: Json = { library: { name: pick(['analytics-python', 'analytics.js', 'analytics-kotlin']), version: '1.0' } };
      if (chance(0.4)) context.page = { url: `https://x.example/${printable(5)}`, referrer: pick(['', 'https://ref.example/']), title: text(6) };
      if (chance(0.3)) context.campaign = { source: 'news', medium: pick(['email', 5, null]), name: text(4) };
      if (chance(0.3)) context.locale = pick(['en-US', 'fr', 5]);
      if (chance(0.3)) context.userAgent = printable(int(80));
      if (chance(0.2)) context.screen = { width: 390, height: pick([844, '844']) };
      if (chance(0.2)) context.sessionId = pick([1764324900000 + int(1e6), printable(1 + int(20)), 0, -5, { x: 1 }]);
      if (chance(0.2)) context.traits = data(1);
      if (chance(0.2)) context[text(1 + int(5))] = chance(0.5) ? data(1) : scalar();
      m.context = context;
    }
    if (chance(0.3)) m.integrations = pick([{}, { All: true }, { 'Actions Amplitude': { session_id: 1764324900000 + int(1e6) } }, { 'Actions Amplitude': 'x' }, null]);
    if (chance(0.8)) {
      m[chance(0.2) ? 'originalTimestamp' : 'timestamp'] = pick([
        () => iso(-int(60_000)),
        () => iso(-int(3_600_000)).replace('Z', '+00:00'),
        () => '2026-11-28T11:15:29.48137+01:00',
        () => '2019-03-01T12:00:00.000Z',
        // At the ends of the range: a clock correction must not push them out of it.
        () => pick(['9999-12-31T23:59:59Z', '0001-01-01T00:30:00Z']),
        () => pick(['2026-02-30T10:00:00', 'yesterday', '', ' ']),
        () => pick([12345, null, true, { at: 1 }, [1, 2]]),
        () => 1764324900000123456789n,
        () => ({ nested: 98765432109876543210n }),
      ])();
    }
    if (chance(0.3)) m.sentAt = pick([iso(0), iso(-2 * 3_600_000), iso(3 * 3_600_000), 'soon', 5, null]);
    if (chance(0.2)) m._metadata = { bundled: [], unbundled: ['x'], nodeVersion: 'v20' };
    if (chance(0.1)) m.options = null;
    if (chance(0.05)) withOwn(m, '__proto__', { polluted: true });
    if (key !== undefined && chance(0.2)) m.writeKey = key;
    return m;
  };

  const dataField = (m: Json) => (m.type === 'identify' ? 'traits' : 'properties');
  const surrogate = (tracker: keyof Keys): Outcome => (tracker === 'replace' ? 'valid' : { code: 'ERR_INVALID_UNICODE' });

  /** One flaw, applied to a valid message: the message as sent, and what must come of it. */
  const flaw = (m: Json, tracker: keyof Keys, single: boolean): { message: unknown; outcome: Outcome } => {
    const bad = (code: ErrorCode | '*') => ({ message: m, outcome: { code } as Outcome });
    const into = (value: unknown, key = 'bad') => {
      const field = dataField(m);
      m[field] = { ...(typeof m[field] === 'object' && m[field] !== null ? (m[field] as Json) : {}), [key]: value };
    };
    const choices: Array<() => { message: unknown; outcome: Outcome }> = [
      () => ({ message: pick(['a string', 5, null, true, [m], 12345678901234567890n]), outcome: { code: 'ERR_INVALID_PAYLOAD' } }),
      () => {
        delete m.userId;
        delete m.anonymousId;
        if (chance(0.5)) m[pick(['userId', 'anonymousId'])] = pick([true, {}, [], '', null, { id: 'x' }]);
        return bad('ERR_MISSING_FIELD');
      },
      () => {
        delete m.anonymousId;
        m.userId = pick([1e21, -1e300, 1.5e300]);
        return bad('ERR_INVALID_FIELD');
      },
      () => {
        delete m.anonymousId;
        m.userId = 'u'.repeat(257 + int(50));
        return bad('ERR_VALUE_TOO_LONG');
      },
      () => {
        m[pick(['properties', 'traits'])] = pick(['text', 5, [1, 2], true]);
        return bad('ERR_INVALID_FIELD');
      },
      () => {
        into(deep(12 + int(30)));
        return bad('ERR_TOO_DEEP');
      },
      () => {
        const field = dataField(m);
        const many: Json = {};
        for (let k = 0; k <= 500; k++) many[`p${k}`] = k;
        m[field] = many;
        return bad('ERR_TOO_MANY_PROPERTIES');
      },
      () => {
        into(1, 'k'.repeat(257 + int(100)));
        return bad('ERR_KEY_TOO_LONG');
      },
      () => {
        into('x'.repeat(SEGMENT_LIMITS.messageBytes + int(20_000)));
        return bad('ERR_PAYLOAD_TOO_LARGE');
      },
      () => {
        const where = int(3);
        if (where === 0) into(`lone \ud800 surrogate`);
        else if (where === 1) into(1, `key\udfff`);
        else {
          delete m.anonymousId;
          m.userId = `u\ud83d`;
        }
        return { message: m, outcome: surrogate(tracker) };
      },
      () => {
        m.writeKey = keys.other;
        return bad('ERR_TOKEN_CONFLICT');
      },
      // Nesting deeper than any stack: refused on its own, whatever the code.
      () => {
        const depth = single ? 6000 + int(9000) : 6000 + int(30_000);
        const where = pick(['properties', 'context', 'messageId', 'timestamp'] as const);
        delete m.originalTimestamp;
        if (where === 'properties') into(deep(depth));
        else m[where] = where === 'context' ? { x: deep(depth) } : deep(depth);
        // An identify reads neither its time nor (but for traits) its context: only the size check, past 32 KiB, meets them.
        if (m.type === 'identify' && (where === 'context' || where === 'timestamp')) return { message: m, outcome: 'either' as Outcome };
        return bad('*');
      },
    ];
    if (!single) choices.push(() => {
      m.type = pick(['Track', 'trait', '', 5, null, ['track'], undefined]);
      return bad('ERR_INVALID_FIELD');
    });
    if (m.type === 'track') {
      choices.push(() => {
        if (chance(0.5)) delete m.event;
        else m.event = pick(['', 5, null, ['x'], { name: 'x' }]);
        return bad('ERR_MISSING_FIELD');
      });
      choices.push(() => {
        m.event = 'e'.repeat(257 + int(40));
        return bad('ERR_VALUE_TOO_LONG');
      });
      choices.push(() => {
        m.event = `ev\udc00`;
        return { message: m, outcome: surrogate(tracker) };
      });
    }
    return pick(choices)();
  };

  /** Messages whose outcome the fuzz does not predict: wrong types in any field. */
  const WRONG = (): unknown => pick([null, true, 0, -1, 1.5, 1e21, 9007199254740993n, '', ' ', 'x'.repeat(300), [], [1, 'a'], {}, { a: { b: 1 } }, '\ud800', deep(20), withOwn({}, '__proto__', { polluted: 1 })]);
  const FIELDS = ['type', 'userId', 'anonymousId', 'event', 'properties', 'traits', 'context', 'integrations', 'timestamp', 'originalTimestamp', 'sentAt', 'name', 'category', 'groupId', 'previousId', 'writeKey', '_metadata'];
  const scramble = (m: Json, single: boolean): Sent['outcome'] => {
    for (let n = 1 + int(3); n > 0; n--) m[pick(single ? FIELDS.filter((f) => f !== 'writeKey') : FIELDS)] = WRONG();
    return 'either';
  };

  /** How the request names its tracker. */
  const auth = (key: string, single: boolean): { headers: Record<string, string>; root?: string; first?: boolean } => {
    const mode = pick(single ? (['basic', 'tracker', 'body', 'bearer'] as const) : (['basic', 'basic-no-colon', 'tracker', 'root', 'first', 'basic+root', 'bearer'] as const));
    if (mode === 'basic') return { headers: { authorization: chance(0.1) ? basic(key).replace('Basic', 'basic') : basic(key) } };
    if (mode === 'basic-no-colon') return { headers: { authorization: `Basic ${Buffer.from(key).toString('base64')}` } };
    if (mode === 'tracker') return { headers: { authorization: `Tracker ${key}` } };
    if (mode === 'root') return { headers: {}, root: key };
    if (mode === 'basic+root') return { headers: { authorization: basic(key) }, root: key };
    // OAuth (python, node, java): a Bearer header, the key in the body.
    if (mode === 'bearer') return single ? { headers: { authorization: 'Bearer eyJhbGciOi.x.y' }, first: true } : { headers: { authorization: 'Bearer eyJhbGciOi.x.y' }, root: key };
    return { headers: {}, first: true };
  };

  const messageIdFor = (i: number, n: number): { messageId: unknown; id?: string } => {
    const base = `fz${i}-${n}`;
    const kind = int(20);
    let messageId: unknown = `${base}-${printable(int(6)).replace(/\s/g, '')}`;
    if (kind === 0) return { messageId: undefined };
    if (kind === 1) return { messageId: pick(['', null]) };
    if (kind === 2) messageId = `${base} with spaces and ünicode`;
    if (kind === 3) messageId = `${base}-${'x'.repeat(130)}`;
    if (kind === 4) messageId = i * 10_000 + n;
    if (kind === 5) messageId = 10n ** 25n + BigInt(i * 10_000 + n);
    if (kind === 6) messageId = `${base}\ud800`;
    if (kind === 7) messageId = { id: base };
    const textOf = typeof messageId === 'string' ? messageId : encode(messageId);
    return { messageId, id: CLIENT_KEY_PATTERN.test(textOf) ? textOf : hashedKey('seg-', textOf) };
  };

  /** The body's bytes on the wire, and the headers that say how. */
  const transport = (text: string, headers: Record<string, string>): (() => RawRequest['body']) => {
    let bytes = Buffer.from(text);
    const type = pick(['application/json', 'application/json', 'text/plain', 'text/plain;charset=UTF-8', 'application/json; charset=utf-8', undefined]);
    if (type) headers['content-type'] = type;
    if (chance(0.25)) {
      bytes = gzipSync(bytes);
      headers['content-encoding'] = pick(['gzip', 'gzip', 'x-gzip', 'deflate']);
    }
    const chunked = chance(0.15);
    return () => (chunked ? Readable.from([bytes.subarray(0, bytes.length >> 1), bytes.subarray(bytes.length >> 1)]) : bytes);
  };

  const batchCase = (i: number): Case => {
    deepest = 0;
    const tracker: keyof Keys = chance(0.75) ? 'main' : 'replace';
    const key = keys[tracker];
    const a = auth(key, false);
    const big = chance(0.006);
    const count = big ? 500 + int(SEGMENT_LIMITS.batchMessages - 499) : 1 + int(chance(0.8) ? 12 : 60);
    const sent: Sent[] = [];
    const batch: unknown[] = [];
    for (let n = 0; n < count; n++) {
      if (n > 0 && !big && chance(0.05)) {
        const from = int(n);
        if (sent[from]!.id !== undefined && sent[from]!.copyOf === undefined) {
          batch.push(batch[from]);
          sent.push({ ...sent[from]!, copyOf: from });
          continue;
        }
      }
      const { messageId, id } = big ? { messageId: `fz${i}-${n}`, id: `fz${i}-${n}` } : messageIdFor(i, n);
      const m = big ? { type: 'track', event: 'bulk', anonymousId: `a${n % 7}`, messageId } : validMessage(pick(TYPES), messageId, key);
      if (a.first && n === 0) {
        m.writeKey = key;
        batch.push(m);
        sent.push({ outcome: 'valid', id });
        continue;
      }
      const roll = big ? 1 : rand();
      if (roll < 0.3) {
        const f = flaw(m, tracker, false);
        batch.push(f.message);
        sent.push({ outcome: f.outcome, id: f.message === m && m.messageId === messageId ? id : undefined });
      } else if (roll < 0.4) {
        const outcome = scramble(m, false);
        batch.push(m);
        sent.push({ outcome, id: m.messageId === messageId ? id : undefined });
      } else {
        batch.push(m);
        sent.push({ outcome: 'valid', id });
      }
    }
    const body: Json = { batch };
    if (a.root !== undefined) body.writeKey = a.root;
    if (chance(0.3)) body.sentAt = pick([iso(0), iso(-2 * 3_600_000), 'garbage', 7]);
    if (chance(0.2)) body.context = { library: { name: 'analytics-go', version: '3.0.0' }, ...(chance(0.3) ? { sessionId: 1764324900000 } : {}) };
    if (chance(0.1)) body.integrations = { All: true };
    if (chance(0.1)) body.messageId = 'batch-level-id';
    if (chance(0.05)) withOwn(body, '__proto__', { polluted: true });
    const text = encode(body);
    const headers = { ...a.headers };
    const bodyOf = transport(text, headers);
    const path = pick(BATCH_PATHS);
    // Flaws that weigh (deep nesting, 32 KiB messages) can take a long batch past Segment's 500 KB.
    const expect: Expect = Buffer.byteLength(text) > SEGMENT_LIMITS.batchBytes ? { kind: 'refused', code: 'ERR_PAYLOAD_TOO_LARGE' } : { kind: 'batch', trackerKey: key, messages: sent };
    return { i, label: `batch of ${count} to ${path} (${tracker})`, make: () => ({ method: 'POST', path, headers, body: bodyOf() }), expect, text, alt: altOf(text) };
  };

  const singleCase = (i: number): Case => {
    deepest = 0;
    const tracker: keyof Keys = chance(0.8) ? 'main' : 'replace';
    const key = keys[tracker];
    const [path, type] = pick(SINGLE_PATHS);
    const a = auth(key, true);
    const { messageId, id } = messageIdFor(i, 0);
    const roll = rand();
    // The path gives the type; a message built for another type is still valid (a track gets an event).
    const m = validMessage(roll < 0.35 || chance(0.8) ? type : pick(TYPES), messageId);
    if (a.first) m.writeKey = key;
    else delete m.writeKey;
    let sent: Sent = { outcome: 'valid', id };
    let message: unknown = m;
    if (roll < 0.35) {
      const f = flaw(m, tracker, true);
      message = f.message;
      sent = { outcome: f.outcome, id: f.message === m && m.messageId === messageId ? id : undefined };
      // With the key in the message, "another tracker's key" is just that tracker's message.
      if (a.first && f.message === m && m.writeKey === keys.other) sent = { outcome: 'either' };
    } else if (roll < 0.45) {
      sent = { outcome: scramble(m, true), id: m.messageId === messageId ? id : undefined };
    } else if (type === 'track' && (typeof m.event !== 'string' || m.event === '')) {
      m.event = 'forced';
    }
    const text = encode(message);
    const headers = { ...a.headers };
    const bodyOf = transport(text, headers);
    return { i, label: `single ${path} (${tracker})`, make: () => ({ method: 'POST', path, headers, body: bodyOf() }), expect: { kind: 'single', trackerKey: key, message: sent }, text, alt: altOf(text) };
  };

  /** A request refused whole, for one reason: everything else in it is fine. */
  const refusedCase = (i: number): Case => {
    const key = keys.main;
    const small = () => Array.from({ length: 1 + int(5) }, (_, n) => validMessage(pick(TYPES), `rf${i}-${n}`));
    let headers: Record<string, string> = { authorization: basic(key), 'content-type': 'application/json' };
    let code: ErrorCode;
    let bytes: Buffer;
    let path = pick(BATCH_PATHS);
    const reason = int(14);
    const plain = (body: unknown) => Buffer.from(encode(body));
    if (reason === 0) {
      code = 'ERR_TOO_MANY_RECORDS';
      bytes = plain({ batch: Array.from({ length: SEGMENT_LIMITS.batchMessages + 1 + int(1000) }, (_, n) => ({ type: 't', messageId: `${n}` })) });
    } else if (reason === 1) {
      code = 'ERR_PAYLOAD_TOO_LARGE';
      const filler = 'x'.repeat(20_000);
      bytes = plain({ batch: Array.from({ length: 26 + int(30) }, (_, n) => ({ type: 'track', event: 'e', anonymousId: 'a', messageId: `big${i}-${n}`, properties: { filler } })) });
      if (chance(0.5)) {
        bytes = gzipSync(bytes);
        headers['content-encoding'] = 'gzip';
      }
    } else if (reason === 2) {
      code = pick(['ERR_EMPTY_BATCH', 'ERR_INVALID_PAYLOAD'] as const);
      bytes = plain(code === 'ERR_EMPTY_BATCH' ? { batch: [] } : pick([[], [{ type: 'track' }], 'batch', 5, null, { batch: { 0: {} } }, { batch: 'x' }, { messages: [] }]));
    } else if (reason === 3) {
      code = 'ERR_MALFORMED_JSON';
      const whole = encode({ batch: small() });
      bytes = Buffer.from(pick([whole.slice(0, 1 + int(whole.length - 1)), `${whole},`, whole.replace('{', "{'"), `{"batch":[${'1,'.repeat(3)}]}`, 'NaN', '{"batch":[],}']));
    } else if (reason === 4) {
      code = 'ERR_MALFORMED_ENCODING';
      const zipped = gzipSync(encode({ batch: small() }));
      bytes = chance(0.5) ? zipped.subarray(0, Math.max(1, zipped.length - 1 - int(zipped.length - 1))) : Buffer.from('not gzip at all');
      headers['content-encoding'] = 'gzip';
    } else if (reason === 5) {
      code = 'ERR_MALFORMED_BODY';
      // A lone surrogate as raw bytes (CESU-8), or bytes that are no UTF-8 at all.
      const whole = encode({ batch: small() });
      const cut = whole.indexOf('"type"') + 1;
      bytes = Buffer.concat([Buffer.from(whole.slice(0, cut)), Buffer.from(pick([[0xed, 0xa0, 0x80], [0xff], [0xc3], [0xf4, 0x90, 0x80, 0x80]])), Buffer.from(whole.slice(cut))]);
    } else if (reason === 6) {
      code = 'ERR_INVALID_TOKEN';
      headers.authorization = pick(['Basic', 'Basic !!!', `Basic ${Buffer.from(':').toString('base64')}`, `Basic ${Buffer.from('nope:').toString('base64')}`, `Basic ${Buffer.from([0xff, 0xfe, 0x3a]).toString('base64')}`, 'Basic a b', 'Tracker', 'Tracker a b', `Basic ${Buffer.from(`${key}x:`).toString('base64')}`]);
      bytes = plain({ batch: small() });
    } else if (reason === 7) {
      code = 'ERR_INVALID_TOKEN';
      delete headers.authorization;
      bytes = plain({ batch: small(), writeKey: pick([5, {}, [key], '', true]) });
    } else if (reason === 8) {
      code = 'ERR_TOKEN_CONFLICT';
      bytes = plain({ batch: small(), writeKey: keys.other });
    } else if (reason === 9) {
      code = 'ERR_MISSING_TOKEN';
      headers = { 'content-type': 'application/json' };
      if (chance(0.5)) headers.authorization = 'Bearer only-a-token';
      bytes = plain({ batch: small() });
    } else if (reason === 10) {
      code = 'ERR_UNSUPPORTED_ENCODING';
      headers['content-encoding'] = pick(['compress', 'gzip, br', 'zstd', printable(5).replace(/[, ]/g, 'z') || 'zz']);
      bytes = plain({ batch: small() });
    } else if (reason === 11) {
      code = 'ERR_UNSUPPORTED_MEDIA_TYPE';
      headers['content-type'] = pick(['multipart/form-data; boundary=x', 'application/xml', 'application/json; charset=latin1', 'image/png']);
      bytes = plain({ batch: small() });
    } else if (reason === 12) {
      code = 'ERR_INVALID_PAYLOAD';
      bytes = Buffer.from(pick(['', '   ', '\n']));
      if (bytes.length === 0) headers['transfer-encoding'] = 'chunked';
    } else {
      code = 'ERR_PAYLOAD_TOO_LARGE';
      const [single] = pick(SINGLE_PATHS);
      path = single;
      bytes = plain({ type: 'track', event: 'e', anonymousId: 'a', properties: { blob: 'y'.repeat(SEGMENT_LIMITS.messageBytes + int(10_000)) } });
    }
    const body = bytes;
    const chunked = headers['transfer-encoding'] === 'chunked';
    if (chunked) delete headers['transfer-encoding'];
    return { i, label: `refused ${code} at ${path}`, make: () => ({ method: 'POST', path, headers, body: chunked ? Readable.from([body]) : body }), expect: { kind: 'refused', code } };
  };

  /** Anything: byte-flipped bodies, odd methods and paths, garbage headers. */
  const chaosCase = (i: number): Case => {
    const base = chance(0.5) ? batchCase(i) : singleCase(i);
    const req = base.make();
    let bytes = Buffer.isBuffer(req.body) ? Buffer.from(req.body) : Buffer.from(base.text ?? '');
    for (let n = int(5); n > 0 && bytes.length > 0; n--) bytes[int(bytes.length)] = int(256);
    if (chance(0.3)) bytes = bytes.subarray(0, int(bytes.length + 1));
    const headers = { ...(req.headers as Record<string, string>) };
    if (chance(0.2)) headers.authorization = pick([printable(int(40)), 'Basic', `Basic ${printable(10)}`, 'Tracker x y']);
    if (chance(0.1)) headers['content-encoding'] = pick(['br', 'deflate', 'identity', 'gzip']);
    if (chance(0.1)) headers.origin = pick(['https://a.example', 'null']);
    const method = chance(0.9) ? 'POST' : pick(['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']);
    const path = chance(0.85) ? req.path : pick(['/v1/m', '/v1/unknown', '/v1//batch', '/v1/batch/extra', '/v1/BATCH', '/v1/import//', `/v1/projects/${pick([keys.main, 'nope', '%00'])}/settings`, '/v1/T', '/v1']);
    const body = bytes;
    return { i, label: `chaos ${method} ${path}`, make: () => ({ method, path, headers, body }), expect: { kind: 'any' } };
  };

  return (i: number): Case => {
    const r = rand();
    if (r < 0.45) return batchCase(i);
    if (r < 0.6) return singleCase(i);
    if (r < 0.75) return refusedCase(i);
    return chaosCase(i);
  };
}

let api: TestApi;
let raw: Listening;
let keys: Keys;
/** Write key → tracker id. */
const trackerOf = new Map<string, string>();
beforeAll(async () => {
  api = await startTestApi();
  raw = await listen(api.runtime.app);
  const replace = await api.addTracker({ invalidUnicode: 'replace' });
  const other = await api.addTracker();
  keys = { main: api.token, replace: replace.token, other: other.token };
  for (const [key, id] of [[api.token, api.tracker.id], [replace.token, replace.tracker.id], [other.token, other.tracker.id]] as const) trackerOf.set(key, id);
});
afterAll(async () => {
  await raw.close();
  await api.close();
});

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
/** The answer's JSON object, or undefined (a preflight's empty 204, a pixel). */
const jsonOf = (res: RawResponse): Json | undefined => (String(res.headers['content-type'] ?? '').startsWith('application/json') ? (json(res) as Json) : undefined);

/** What every answer must be: no 5xx; a 4xx is JSON with code and message at the top, its code's own status. */
function answerProblems(res: RawResponse): string[] {
  if (res.status >= 500) return [`${res.status} ${res.body.toString('utf8').slice(0, 300)}`];
  if (res.status < 400) return [];
  if (!String(res.headers['content-type'] ?? '').startsWith('application/json')) return [`${res.status} without JSON`];
  const body = json(res) as Json;
  const code = body.code as ErrorCode;
  if (!(code in ERROR_CODES) || ERROR_CODES[code].status !== res.status) return [`${res.status} with code ${String(code)}`];
  if (typeof body.message !== 'string' || body.success !== false || !isObject(body.error) || body.error.code !== code) return [`${res.status} ${code}: not Segment's error body`];
  return [];
}

interface Tally {
  accepted: number;
  /** Every code an answer gave, whole or per message: what the run reached. */
  codes: Set<string>;
  /** The `_id` of each message an answer said was stored → the write key of its tracker. */
  stored: Map<string, string>;
  /** The `_id` of each message an answer refused. */
  refused: Set<string>;
}

/** Checks a batch or single answer against what each message had to come to; returns problems. */
function checkMessages(res: RawResponse, c: Case, tally: Tally): string[] {
  const e = c.expect;
  if (e.kind !== 'batch' && e.kind !== 'single') return [];
  const messages = e.kind === 'batch' ? e.messages : [e.message];
  const problems: string[] = [];
  let rejected = new Map<number, string>();
  if (e.kind === 'single') {
    const outcome = e.message.outcome;
    if (res.status === 200) {
      if (typeof outcome === 'object') problems.push(`stored a message flawed with ${outcome.code}`);
    } else {
      rejected.set(0, (json(res) as Json).code as string);
      if (outcome === 'valid') problems.push(`refused a valid message: ${res.status} ${res.body.toString('utf8').slice(0, 200)}`);
      if (typeof outcome === 'object' && outcome.code !== '*' && outcome.code !== rejected.get(0)) problems.push(`refused with ${rejected.get(0)}, not ${outcome.code}`);
      if (res.status >= 500 || res.status < 400) problems.push(`status ${res.status}`);
    }
  } else {
    if (res.status !== 200) return [`batch answered ${res.status}: ${res.body.toString('utf8').slice(0, 200)}`];
    const body = json(res) as { errors?: Array<{ index: number; code: string; message: string }>; rejected: number };
    rejected = new Map((body.errors ?? []).map((err) => [err.index, err.code]));
    if ((body.errors ?? []).length !== body.rejected || rejected.size !== body.rejected) problems.push(`errors ${JSON.stringify(body.errors)} against rejected ${body.rejected}`);
    messages.forEach((m, index) => {
      const code = rejected.get(index);
      if (m.outcome === 'valid' && code !== undefined) problems.push(`message ${index} valid, refused with ${code}`);
      if (typeof m.outcome === 'object' && code === undefined) problems.push(`message ${index} flawed (${m.outcome.code}), not refused`);
      if (typeof m.outcome === 'object' && code !== undefined && m.outcome.code !== '*' && m.outcome.code !== code) problems.push(`message ${index} refused with ${code}, not ${m.outcome.code}`);
    });
  }
  const body = json(res) as Json;
  const kept = messages.filter((_, index) => !rejected.has(index));
  const repeats = kept.filter((m) => m.copyOf !== undefined || (m.id !== undefined && tally.stored.has(m.id))).length;
  const accepted = res.status === 200 ? Number(body.accepted) : 0;
  const duplicates = e.kind === 'batch' ? Number(body.duplicates ?? 0) : body.duplicate === true ? 1 : 0;
  if (res.status === 200 && (accepted !== kept.length - repeats || duplicates !== repeats)) problems.push(`accepted ${accepted} and duplicates ${duplicates}, expected ${kept.length - repeats} and ${repeats}`);
  if (e.kind === 'single' && res.status === 200 && e.message.id !== undefined && body.id !== e.message.id) problems.push(`id ${String(body.id)}, expected ${e.message.id}`);
  tally.accepted += accepted;
  messages.forEach((m, index) => {
    if (m.id === undefined || m.copyOf !== undefined) return;
    if (rejected.has(index)) tally.refused.add(m.id);
    else tally.stored.set(m.id, e.trackerKey);
  });
  return problems;
}

/** For an answer whose body cannot be predicted: the counts still add up to the messages sent. */
function checkCounts(res: RawResponse, c: Case, req: RawRequest, tally: Tally): string[] {
  if (res.status !== 200 || req.method !== 'POST') return [];
  const body = json(res) as Json;
  if (typeof body.accepted !== 'number') return [];
  tally.accepted += body.accepted;
  if (!BATCH_PATHS.includes(req.path) || c.text === undefined || !Buffer.isBuffer(req.body)) return [];
  let parsed: unknown;
  try {
    parsed = parseExactJson(req.body.toString('utf8'));
  } catch {
    return [];
  }
  const batch = isObject(parsed) && Array.isArray(parsed.batch) ? parsed.batch : undefined;
  if (batch === undefined || req.headers?.['content-encoding'] !== undefined) return [];
  const total = body.accepted + Number(body.duplicates ?? 0) + Number(body.rejected);
  return total === batch.length ? [] : [`counts ${total} for ${batch.length} messages`];
}

test(`${CASES} fuzzed /v1 requests (seed ${SEED}): no 5xx, errors as Segment's SDKs read them, every valid message stored once`, async () => {
  const next = generator(seededRandom(SEED), keys);
  const failures: string[] = [];
  const tally: Tally = { accepted: 0, codes: new Set(), stored: new Map(), refused: new Set() };
  const replays: Case[] = [];
  const run = async (c: Case, replay = false) => {
    const req = c.make();
    const shown = `#${c.i}${replay ? ' (replay)' : ''} ${c.label}`;
    try {
      const res = await raw.request(req);
      const problems = answerProblems(res);
      const answer = jsonOf(res);
      if (res.status >= 400) tally.codes.add(String(answer?.code));
      if (res.status === 200 && Array.isArray(answer?.errors)) for (const e of answer.errors as Array<{ code: string }>) tally.codes.add(e.code);
      if (problems.length === 0 && res.status < 500) {
        if (c.alt !== undefined && res.status >= 400 && (json(res) as Json).code === c.alt) return;
        if (c.expect.kind === 'refused') {
          const code = res.status >= 400 ? (json(res) as Json).code : undefined;
          if (code !== c.expect.code) problems.push(`expected ${c.expect.code}, got ${res.status} ${String(code)}`);
        } else if (c.expect.kind === 'any') problems.push(...checkCounts(res, c, req, tally));
        else problems.push(...checkMessages(res, c, tally));
      }
      for (const p of problems) failures.push(`${shown}: ${p}${res.status >= 500 ? `\n  body: ${(c.text ?? '').slice(0, 400)}` : ''}`);
      if (!replay && c.expect.kind === 'batch' && res.status === 200 && c.i % 20 === 0) replays.push(c);
    } catch (err) {
      failures.push(`${shown}: ${(err as Error).message}`);
    }
  };
  const cases = Array.from({ length: CASES }, (_, i) => next(i));
  for (let at = 0; at < cases.length; at += PARALLEL) await Promise.all(cases.slice(at, at + PARALLEL).map((c) => run(c)));
  // The same bytes again, as an SDK retries a batch whose answer it lost: nothing stored twice.
  for (let at = 0; at < replays.length; at += PARALLEL) await Promise.all(replays.slice(at, at + PARALLEL).map((c) => run(c, true)));
  expect(failures).toEqual([]);

  const stored = (await api.storedRecords()).filter((r) => r.kind !== 'session');
  const byId = new Map<string, number>();
  for (const r of stored) byId.set(`${r.trackerId}\n${r.id}`, (byId.get(`${r.trackerId}\n${r.id}`) ?? 0) + 1);
  const lost = [...tally.stored].filter(([id, key]) => byId.get(`${trackerOf.get(key)}\n${id}`) !== 1);
  const storedIds = new Set(stored.map((r) => r.id));
  const leaked = [...tally.refused].filter((id) => storedIds.has(id) && !tally.stored.has(id));
  expect(lost.slice(0, 10)).toEqual([]);
  expect(leaked.slice(0, 10)).toEqual([]);
  expect(stored.length).toBe(tally.accepted);
  // Every event time is one the destinations take: ISO 8601 UTC, years 0001 to 9999.
  expect(stored.filter((r) => r.kind === 'event' && !/^(?!0000)\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(r.eventAt ?? '')).map((r) => r.eventAt).slice(0, 5)).toEqual([]);
  expect(replays.length).toBeGreaterThan(5);
  // The run reached every refusal it means to, whole and per message (a smaller run may not).
  if (CASES >= 2000) {
    const meant: ErrorCode[] = ['ERR_INVALID_PAYLOAD', 'ERR_MISSING_FIELD', 'ERR_INVALID_FIELD', 'ERR_VALUE_TOO_LONG', 'ERR_TOO_DEEP', 'ERR_TOO_MANY_PROPERTIES', 'ERR_KEY_TOO_LONG', 'ERR_INVALID_UNICODE', 'ERR_PAYLOAD_TOO_LARGE', 'ERR_TOKEN_CONFLICT', 'ERR_TOO_MANY_RECORDS', 'ERR_EMPTY_BATCH', 'ERR_MALFORMED_JSON', 'ERR_MALFORMED_ENCODING', 'ERR_MALFORMED_BODY', 'ERR_INVALID_TOKEN', 'ERR_MISSING_TOKEN', 'ERR_UNSUPPORTED_ENCODING', 'ERR_UNSUPPORTED_MEDIA_TYPE'];
    expect(meant.filter((code) => !tally.codes.has(code))).toEqual([]);
    expect(tally.stored.size).toBeGreaterThan(CASES);
  }
  expect(({} as Json).polluted).toBeUndefined();
  expect((await api.http.get('/healthz')).status).toBe(200);
}, Math.max(120_000, CASES * 50));
