import { Readable } from 'node:stream';
import { deflateSync, gzipSync } from 'node:zlib';
import { ERROR_CODES, type ErrorCode } from '../../src/core/errors';
import { startTestApi, type TestApi } from '../helpers/api';
import { listen, type Listening, type RawRequest } from '../helpers/raw-http';
import { seededRandom } from '../helpers/seeded-random';

/**
 * "No input, however malformed, produces a 5xx." A bounded, seeded fuzz loop: the same seed
 * always sends the same requests, so a failure names the case that reproduces it.
 * FUZZ_SEED and FUZZ_CASES explore further: `FUZZ_SEED=7 FUZZ_CASES=5000 npx jest test/http/fuzz`.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 0x7121b);
const CASES = Number(process.env.FUZZ_CASES ?? 400);
const PARALLEL = 8;

let api: TestApi;
let raw: Listening;
beforeAll(async () => {
  // Small limits so that the limit paths are hit often too.
  api = await startTestApi({ LIMIT_REQUEST_BYTES: '3000', LIMIT_DECODED_BYTES: '6000', LIMIT_RECORDS_PER_REQUEST: '5', LIMIT_DEPTH: '4' });
  raw = await listen(api.runtime.app);
});
afterAll(async () => {
  await raw.close();
  await api.close();
});

function generator(rand: () => number, token: string) {
  const int = (n: number) => Math.floor(rand() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  const bytes = (n: number) => Buffer.from(Array.from({ length: n }, () => int(256)));
  const printable = (n: number) => String.fromCharCode(...Array.from({ length: n }, () => 0x20 + int(95)));
  const pct = (s: string) => (rand() < 0.5 ? encodeURIComponent(s) : s.replace(/[#?&\s]/g, (c) => `%${c.charCodeAt(0).toString(16)}`));

  const value = (depth = 0): unknown => {
    switch (int(depth > 5 ? 5 : 8)) {
      case 0: return printable(int(20));
      case 1: return rand() * 1e6 - 5e5;
      case 2: return pick([true, false, null, 0, -0, 1e308, '', '__proto__']);
      case 3: return int(2 ** 53);
      case 4: return pick(['2026-02-30T10:00:00', '2026-03-08T02:30:00', '2026-01-01T00:00:00Z', 'x', '9999-12-31T23:59:59.999999999+23:59']);
      case 5: return Array.from({ length: int(4) }, () => value(depth + 1));
      default: return Object.fromEntries(Array.from({ length: int(4) }, () => [key(), value(depth + 1)]));
    }
  };
  const key = () => pick(['_event', '_uid', '_sid', '_event_at', '_token', '_x', '__proto__', 'constructor', 'prototype', 'toString', 'data', 'k'.repeat(300), printable(1 + int(8))]);
  const text = (v: unknown) => (typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v));
  const record = () => {
    const r: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    if (rand() < 0.7) r._event = pick(['view', '', 5, null, ['a'], 'e'.repeat(300)]);
    for (let i = int(6); i > 0; i--) r[key()] = value();
    if (rand() < 0.2) r._token = pick([token, 'nope', 7]);
    return r;
  };
  const jsonText = () => JSON.stringify(rand() < 0.3 ? Array.from({ length: int(8) }, () => (rand() < 0.8 ? record() : value())) : rand() < 0.9 ? record() : value());
  const mutate = (b: Buffer) => {
    const out = Buffer.from(b);
    for (let i = int(4); i > 0 && out.length > 0; i--) out[int(out.length)] = int(256);
    return rand() < 0.3 ? out.subarray(0, int(out.length + 1)) : out;
  };

  const query = () => {
    const parts: string[] = [];
    if (rand() < 0.6) parts.push(`_token=${pick([token, token, 'garbage', '', `${token}&_token=${token}x`])}`);
    for (let i = int(5); i > 0; i--) parts.push(`${pct(key())}=${pct(text(value()))}`);
    if (rand() < 0.3) {
      const payload = rand() < 0.6 ? Buffer.from(jsonText()) : bytes(int(40));
      const b64 = pick(['base64', 'base64url'] as const);
      parts.push(`data=${rand() < 0.3 ? pct(printable(int(30))) : mutate(Buffer.from(payload.toString(b64))).toString('latin1').replace(/[^\x21-\x7e]/g, '')}`);
    }
    if (rand() < 0.1) parts.push(`%${printable(2)}=%E0%A4&%zz`);
    return parts.length > 0 ? `?${parts.join('&')}` : '';
  };

  const body = (): { body?: Buffer | Readable; encoding?: string } => {
    const kind = int(9);
    let buf: Buffer;
    if (kind === 0) return {};
    if (kind === 1) buf = bytes(int(4000));
    else if (kind === 2) buf = mutate(Buffer.from(jsonText()));
    else if (kind === 3) buf = Buffer.from(new URLSearchParams(Object.entries(record()).map(([k, v]): [string, string] => [k, text(v)])).toString());
    else buf = Buffer.from(jsonText());
    let encoding: string | undefined;
    if (rand() < 0.35) {
      encoding = pick(['gzip', 'deflate', 'br', 'x-gzip', 'compress', 'gzip, deflate', 'identity', printable(6)]);
      if (encoding === 'gzip' || encoding === 'x-gzip') buf = rand() < 0.3 ? mutate(gzipSync(buf)) : gzipSync(buf);
      if (encoding === 'deflate') buf = rand() < 0.3 ? mutate(deflateSync(buf)) : deflateSync(buf);
      if (rand() < 0.1) buf = gzipSync(Buffer.alloc(50_000 + int(500_000)));
    }
    return { body: rand() < 0.2 ? Readable.from([buf.subarray(0, buf.length >> 1), buf.subarray(buf.length >> 1)]) : buf, ...(encoding ? { encoding } : {}) };
  };

  return (): RawRequest => {
    // Weighted toward the ingestion paths and methods, where the parsing is.
    const method = pick(['GET', 'GET', 'GET', 'POST', 'POST', 'POST', 'POST', 'POST', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'PATCH', 'PROPFIND', 'TRACE']);
    const path = pick(['/v3/event', '/v3/event', '/v3/event', '/v3/user', '/v3/session', '/v3/event/tracker.gif', '/v3/session/tracker.js', '/v3/event/', '//v3/event', '/healthz', '/readyz', `/${pct(printable(int(12)))}`, `/v3/${pct(printable(4))}/tracker.gif`]);
    const headers: Record<string, string> = {};
    if (rand() < 0.4) headers.authorization = pick([`Tracker ${token}`, 'Tracker nope', 'Bearer x', 'Tracker', `tracker ${token} ${token}`, printable(int(30))]);
    if (rand() < 0.8) headers['content-type'] = pick(['application/json', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', 'multipart/form-data', 'application/vnd.x+json', printable(int(25))]);
    if (rand() < 0.3) headers.origin = pick(['https://a.example', 'null', printable(int(20))]);
    if (rand() < 0.2) headers['access-control-request-method'] = pick(['POST', 'GET', printable(5)]);
    if (rand() < 0.2) headers['user-agent'] = printable(int(100));
    const b = method === 'GET' || method === 'HEAD' ? (rand() < 0.1 ? body() : {}) : body();
    if (b.encoding) headers['content-encoding'] = b.encoding;
    // Only what node:http will put on the wire: it refuses spaces and control characters in a path.
    const target = `${path}${query()}`.replace(/[^\x21-\x7e]/g, (c) => encodeURIComponent(c));
    return { method, path: target, headers, ...(b.body ? { body: b.body } : {}) };
  };
}

test(`${CASES} malformed requests (seed ${SEED}) never produce a 5xx`, async () => {
  const next = generator(seededRandom(SEED), api.token);
  const cases = Array.from({ length: CASES }, (_, i) => ({ i, req: next() }));
  const failures: string[] = [];
  for (let at = 0; at < cases.length; at += PARALLEL) {
    await Promise.all(
      cases.slice(at, at + PARALLEL).map(async ({ i, req }) => {
        const shown = `#${i} ${req.method} ${req.path} ${JSON.stringify(req.headers)}`;
        try {
          const res = await raw.request(req);
          if (res.status >= 500) failures.push(`${shown} → ${res.status} ${res.body.toString('utf8').slice(0, 200)}`);
          const type = String(res.headers['content-type'] ?? '');
          if (res.status >= 400 && type.startsWith('application/json') && req.method !== 'HEAD') {
            const code = (JSON.parse(res.body.toString('utf8')) as { error?: { code?: string } }).error?.code as ErrorCode | undefined;
            if (!code || !(code in ERROR_CODES) || ERROR_CODES[code].status !== res.status) failures.push(`${shown} → ${res.status} with code ${String(code)}`);
          }
        } catch (err) {
          failures.push(`${shown} → ${(err as Error).message}`);
        }
      }),
    );
  }
  expect(failures).toEqual([]);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect((await api.http.get('/healthz')).status).toBe(200);
});
