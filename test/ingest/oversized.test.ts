import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { listenApi, type ApiServer } from '../../src/boot/api-server';
import { startTestApi, type TestApi } from '../helpers/api';

/**
 * Requests past the limits, sent over raw sockets as a hostile or careless client would: every one
 * gets its JSON answer (414, 431, 413), read by the client, never a reset or a broken pipe.
 */
let api: TestApi;
let server: ApiServer;
let port: number;

beforeAll(async () => {
  api = await startTestApi({ PORT: '0', HOST: '127.0.0.1' });
  server = await listenApi(api.runtime.app, api.config);
  port = (server.server.address() as AddressInfo).port;
});
afterAll(async () => {
  await server.close();
  await api.close();
});

interface Exchange {
  text: string;
  /** A socket error the client saw (ECONNRESET, EPIPE), if any. */
  error?: string;
}

/**
 * Writes `head` then `body` (all of it, as a client that does not read while it sends), and reads
 * one whole answer (its Content-Length) or until the server closes.
 */
function exchange(head: string, body?: Buffer): Promise<Exchange> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let error: string | undefined;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      socket.destroy();
      resolve({ text: Buffer.concat(chunks).toString('latin1'), ...(error ? { error } : {}) });
    };
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      const text = Buffer.concat(chunks).toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: (\d+)\r\n/i.exec(text)?.[1];
      if (end >= 0 && length !== undefined && Buffer.byteLength(text.slice(end + 4), 'latin1') >= Number(length)) finish();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => (error ??= err.code));
    socket.on('close', finish);
    socket.write(head);
    if (body) socket.write(body);
  });
}

const statusOf = (text: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
const jsonOf = (text: string) => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { error: { code: string } };

test('a GET whose URL is past LIMIT_HEADER_BYTES (a 100 KiB data=) reads 414 ERR_URI_TOO_LONG, five times out of five', async () => {
  const data = Buffer.from(JSON.stringify({ _event: 'big', blob: 'x'.repeat(75_000) })).toString('base64');
  for (let i = 0; i < 5; i++) {
    const res = await exchange(`GET /v3/event?_token=${api.token}&data=${data} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(res.error).toBeUndefined();
    expect(statusOf(res.text)).toBe(414);
    expect(res.text).toMatch(/\r\nConnection: close\r\n/);
    expect(jsonOf(res.text).error.code).toBe('ERR_URI_TOO_LONG');
  }
});

test('a 20 KB data= URL is within the limit and accepted', async () => {
  const data = Buffer.from(JSON.stringify({ _event: 'mid', blob: 'y'.repeat(14_000) })).toString('base64url');
  const res = await exchange(`GET /v3/event?_token=${api.token}&data=${data} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
  expect(statusOf(res.text)).toBe(202);
});

test('headers past the limit with a short URL read 431 ERR_HEADERS_TOO_LARGE', async () => {
  const headers = Array.from({ length: 80 }, (_, i) => `X-Filler-${i}: ${'z'.repeat(1000)}\r\n`).join('');
  const res = await exchange(`GET /v3/event?_token=${api.token}&_event=x HTTP/1.1\r\nHost: x\r\n${headers}\r\n`);
  expect(res.error).toBeUndefined();
  expect(statusOf(res.text)).toBe(431);
  expect(jsonOf(res.text).error.code).toBe('ERR_HEADERS_TOO_LARGE');
});

test('a 2 MB POST reads its 413, with Content-Length and chunked, five times each', async () => {
  const body = Buffer.alloc(2_000_000, 'a');
  for (let i = 0; i < 5; i++) {
    const sized = await exchange(`POST /v3/event HTTP/1.1\r\nHost: x\r\nAuthorization: Tracker ${api.token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`, body);
    expect(sized.error).toBeUndefined();
    expect(statusOf(sized.text)).toBe(413);
    expect(jsonOf(sized.text).error.code).toBe('ERR_PAYLOAD_TOO_LARGE');
    const chunked = Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]);
    const streamed = await exchange(`POST /v3/event HTTP/1.1\r\nHost: x\r\nAuthorization: Tracker ${api.token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`, chunked);
    expect(streamed.error).toBeUndefined();
    expect(statusOf(streamed.text)).toBe(413);
  }
});

test('a request that is not HTTP reads a JSON 400', async () => {
  const res = await exchange('HELLO THERE\r\n\r\n');
  expect(statusOf(res.text)).toBe(400);
  expect(jsonOf(res.text).error.code).toBe('ERR_BAD_REQUEST');
});
