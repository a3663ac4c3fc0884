import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
// The proxy agents the Google libraries build for HTTPS_PROXY (gaxios: https-proxy-agent for every
// URL; teeny-request: http-proxy-agent for http:// ones). Both come with them.
import { HttpProxyAgent } from 'http-proxy-agent';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { agentFetch } from '../../../connectors/shared/agent-fetch';
import { startHttpProxy, type HttpProxy } from '../../helpers/http-proxy';

let server: Server;
let origin: string;
let proxy: HttpProxy;
const seen: Array<{ method: string; url: string; body: string; headers: IncomingMessage['headers'] }> = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', body, headers: req.headers });
      if (req.url === '/empty') return void res.writeHead(204).end();
      if (req.url === '/hang') return;
      const payload = JSON.stringify({ echo: body, method: req.method });
      if (req.url === '/gzip') return void res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'set-cookie': ['a=1', 'b=2'] }).end(gzipSync(payload));
      res.writeHead(201, { 'content-type': 'application/json' }).end(payload);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy = await startHttpProxy();
});
afterAll(async () => {
  await proxy.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
beforeEach(() => (seen.length = 0));

test('without an agent it is Node’s fetch: nothing goes through the proxy', async () => {
  const res = await agentFetch(`${origin}/x`, { method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json' } });
  expect(res.status).toBe(201);
  expect(await res.json()).toEqual({ echo: '{"a":1}', method: 'POST' });
  expect(proxy.tunnels).toEqual([]);
});

test('with https-proxy-agent: a CONNECT tunnel, the body and headers sent, the answer read as fetch gives it', async () => {
  const agent = new HttpsProxyAgent(proxy.url);
  const res = await agentFetch(`${origin}/gzip`, { method: 'POST', body: new TextEncoder().encode('{"b":2}'), headers: new Headers({ 'x-goog-api-client': 'test', 'content-type': 'application/json' }), agent });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/json');
  expect(res.headers.get('set-cookie')).toBe('a=1, b=2');
  // gzip undone, as fetch does.
  expect(await res.json()).toEqual({ echo: '{"b":2}', method: 'POST' });
  expect(seen[0]).toMatchObject({ method: 'POST', url: '/gzip', headers: { 'x-goog-api-client': 'test', 'content-length': '7' } });
  expect(proxy.tunnels).toEqual([new URL(origin).host]);
});

test('with http-proxy-agent: an absolute-URI request; a 204 has no body', async () => {
  const agent = new HttpProxyAgent(proxy.url);
  const res = await agentFetch(new URL(`${origin}/empty`), { agent });
  expect(res.status).toBe(204);
  expect(await res.text()).toBe('');
  expect(proxy.forwarded).toEqual([`GET ${origin}/empty`]);
});

test('an aborted signal stops a request that hangs', async () => {
  const controller = new AbortController();
  const pending = agentFetch(`${origin}/hang`, { agent: new HttpsProxyAgent(proxy.url), signal: controller.signal });
  setTimeout(() => controller.abort(), 50);
  await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
});
