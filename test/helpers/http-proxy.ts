import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';

export interface ProxyLog {
  /** `CONNECT host:port` tunnels opened (https-proxy-agent, which gaxios uses for every URL). */
  tunnels: string[];
  /** Absolute-URI requests forwarded (`POST http://host:port/path`, what http-proxy-agent sends for http:// URLs). */
  forwarded: string[];
}

export interface HttpProxy extends ProxyLog {
  /** `http://127.0.0.1:<port>`, for HTTPS_PROXY / HTTP_PROXY. */
  url: string;
  close(): Promise<void>;
}

/**
 * A forward proxy for tests: CONNECT tunnels and absolute-URI requests, every one logged. Whatever
 * host a client asks for, it connects to 127.0.0.1 on the port asked for, so a test can give a
 * client a host name that resolves nowhere (`sheets.proxy-test.invalid`): a request that reaches
 * the fake behind it can only have come through the proxy. With `credentials` (`user:password`)
 * it answers 407 to requests without them.
 */
export async function startHttpProxy(opts: { credentials?: string } = {}): Promise<HttpProxy> {
  const log: ProxyLog = { tunnels: [], forwarded: [] };
  // With credentials, a request without the right Proxy-Authorization gets 407, as a proxy answers.
  const allowed = (req: IncomingMessage) => !opts.credentials || req.headers['proxy-authorization'] === `Basic ${Buffer.from(opts.credentials).toString('base64')}`;
  const refusal = 'HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n';
  const sockets = new Set<Socket>();
  const track = (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
  };
  const server: Server = createServer((req: IncomingMessage, res) => {
    const target = new URL(req.url ?? '/');
    if (!allowed(req)) return void res.writeHead(407, { 'Proxy-Authenticate': 'Basic realm="test"' }).end();
    log.forwarded.push(`${req.method} ${target.href}`);
    const upstream = request({ host: '127.0.0.1', port: target.port || 80, method: req.method, path: `${target.pathname}${target.search}`, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.on('connection', track);
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    if (!allowed(req)) return void client.end(refusal);
    log.tunnels.push(req.url ?? '');
    const port = Number((req.url ?? '').split(':').pop());
    const upstream = connect(port, '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      client.pipe(upstream).pipe(client);
    });
    track(upstream);
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get tunnels() {
      return log.tunnels;
    },
    get forwarded() {
      return log.forwarded;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
