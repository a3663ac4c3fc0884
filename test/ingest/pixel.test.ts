import type { Response } from 'supertest';
import { startTestApi, type TestApi } from '../helpers/api';
import { storedCount } from '../helpers/records';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => api.close());

interface DecodedGif {
  width: number;
  height: number;
  /** Palette index of each pixel. */
  pixels: number[];
  transparentIndex: number | undefined;
}

/** Reads the LZW image data of a GIF (LSB-first variable-width codes), failing on any truncation. */
function lzwDecode(data: Buffer, minCodeSize: number, pixelCount: number): number[] {
  const clear = 1 << minCodeSize;
  const end = clear + 1;
  let size = minCodeSize + 1;
  let dict: number[][] = [];
  const reset = () => {
    dict = Array.from({ length: clear + 2 }, (_, i) => [i]);
    size = minCodeSize + 1;
  };
  reset();
  const out: number[] = [];
  let bit = 0;
  let prev: number[] | undefined;
  for (;;) {
    if (bit + size > data.length * 8) throw new Error('LZW data ends before the end code');
    let code = 0;
    for (let i = 0; i < size; i++, bit++) code |= ((data[bit >> 3]! >> (bit & 7)) & 1) << i;
    if (code === clear) {
      reset();
      prev = undefined;
      continue;
    }
    if (code === end) break;
    const entry = dict[code] ?? (prev && code === dict.length ? [...prev, prev[0]!] : undefined);
    if (!entry) throw new Error(`bad LZW code ${code}`);
    out.push(...entry);
    if (prev) dict.push([...prev, entry[0]!]);
    prev = entry;
    if (dict.length === 1 << size && size < 12) size++;
  }
  if (out.length !== pixelCount) throw new Error(`decoded ${out.length} pixels, expected ${pixelCount}`);
  return out;
}

/** A strict GIF89a reader: enough to prove the pixel is a well-formed image. */
function decodeGif(buf: Buffer): DecodedGif {
  if (buf.subarray(0, 6).toString('ascii') !== 'GIF89a') throw new Error('not GIF89a');
  const width = buf.readUInt16LE(6);
  const height = buf.readUInt16LE(8);
  const flags = buf[10]!;
  let at = 13;
  if (flags & 0x80) at += 3 * (1 << ((flags & 7) + 1));
  let transparentIndex: number | undefined;
  for (;;) {
    const block = buf[at];
    if (block === 0x21) {
      const label = buf[at + 1]!;
      if (label === 0xf9 && buf[at + 3]! & 1) transparentIndex = buf[at + 6];
      at += 2;
      while (buf[at]! !== 0) at += buf[at]! + 1;
      at += 1;
    } else if (block === 0x2c) {
      const w = buf.readUInt16LE(at + 5);
      const h = buf.readUInt16LE(at + 7);
      if (buf[at + 9]! & 0x80) throw new Error('local colour table not expected');
      at += 10;
      const minCodeSize = buf[at++]!;
      const chunks: Buffer[] = [];
      while (buf[at]! !== 0) {
        chunks.push(buf.subarray(at + 1, at + 1 + buf[at]!));
        at += buf[at]! + 1;
      }
      at += 1;
      const pixels = lzwDecode(Buffer.concat(chunks), minCodeSize, w * h);
      if (buf[at] !== 0x3b || at !== buf.length - 1) throw new Error('missing trailer');
      return { width, height, pixels, transparentIndex };
    } else throw new Error(`unexpected block ${block} at ${at}`);
  }
}

const binary = (req: ReturnType<TestApi['http']['get']>) =>
  req.buffer(true).parse((res, cb) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => cb(null, Buffer.concat(chunks)));
  });

function expectGif(res: Response): void {
  expect(res.headers['content-type']).toBe('image/gif');
  expect(res.headers['cache-control']).toBe('no-store');
  const gif = decodeGif(res.body as Buffer);
  expect(gif).toMatchObject({ width: 1, height: 1, pixels: [0], transparentIndex: 0 });
}

function expectJs(res: Response): void {
  expect(res.headers['content-type']).toMatch(/^application\/javascript/);
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.headers['content-length']).toBe('0');
  expect(res.text ?? '').toBe('');
}

const kinds = [
  { kind: 'user', params: '_uid=u1&plan=pro' },
  { kind: 'session', params: '_sid=s1' },
  { kind: 'event', params: '_event=view&page=%2F' },
] as const;

describe.each(kinds)('/v3/$kind', ({ kind, params }) => {
  test('tracker.gif: a valid transparent 1×1 GIF, image/gif, no-store; the record is stored', async () => {
    const before = await storedCount(api);
    const res = await binary(api.http.get(`/v3/${kind}/tracker.gif?_token=${api.token}&${params}`));
    expect(res.status).toBe(200);
    expectGif(res);
    expect(res.headers['x-tributary-error']).toBeUndefined();
    expect(await storedCount(api)).toBe(before + 1);
    expect((await api.queuedRecords()).at(-1)).toMatchObject({ kind });
  });

  test('tracker.js: an empty application/javascript, no-store; the record is stored', async () => {
    const before = await storedCount(api);
    const res = await api.http.get(`/v3/${kind}/tracker.js?${params}`).set('Authorization', `Tracker ${api.token}`);
    expect(res.status).toBe(200);
    expectJs(res);
    expect(await storedCount(api)).toBe(before + 1);
  });

  test('errors keep the fixed body, use the error status and name the code in X-Tributary-Error', async () => {
    const bad = await binary(api.http.get(`/v3/${kind}/tracker.gif?_token=nope&${params}`));
    expect(bad.status).toBe(401);
    expect(bad.headers['x-tributary-error']).toBe('ERR_INVALID_TOKEN');
    expectGif(bad);

    const missing = await api.http.get(`/v3/${kind}/tracker.js?_token=${api.token}`);
    expect(missing.status).toBe(400);
    expect(missing.headers['x-tributary-error']).toBe('ERR_MISSING_FIELD');
    expectJs(missing);
  });
});

test('a wrong method on a pixel path is a 405 with Allow, still as a GIF', async () => {
  const res = await binary(api.http.post(`/v3/event/tracker.gif?_token=${api.token}&_event=x`));
  expect(res.status).toBe(405);
  expect(res.headers.allow).toBe('HEAD, GET');
  expect(res.headers['x-tributary-error']).toBe('ERR_METHOD_NOT_ALLOWED');
  expectGif(res);
});

test('a malformed data= on a pixel answers 400 with the GIF', async () => {
  const res = await binary(api.http.get(`/v3/event/tracker.gif?_token=${api.token}&data=%%%`));
  expect(res.status).toBe(400);
  expect(res.headers['x-tributary-error']).toBe('ERR_MALFORMED_BASE64');
  expectGif(res);
});

test('a pixel batch with a bad record still answers 200 while one record is accepted', async () => {
  const data = Buffer.from(JSON.stringify([{ _event: 'ok' }, { nope: 1 }])).toString('base64url');
  const res = await binary(api.http.get(`/v3/event/tracker.gif?_token=${api.token}&data=${data}`));
  expect(res.status).toBe(200);
  expectGif(res);
});

test('HEAD on a pixel answers its headers and stores nothing', async () => {
  const before = await storedCount(api);
  const res = await api.http.head(`/v3/event/tracker.gif?_token=${api.token}&_event=view`);
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toBe('image/gif');
  expect(res.headers['cache-control']).toBe('no-store');
  expect(await storedCount(api)).toBe(before);
});

test('browsers may read X-Tributary-Error across origins', async () => {
  const res = await api.http.get(`/v3/event/tracker.js?_token=nope&_event=x`).set('Origin', 'https://site.example');
  expect(res.headers['access-control-allow-origin']).toBe('https://site.example');
  expect(res.headers['access-control-expose-headers']).toMatch(/X-Tributary-Error/i);
});
