import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** What the proxy does to one request to the relay's `/v3/…`. */
export type Fault = 'pass' | 'refuse' | 'lose-answer' | 'busy' | 'slow';

export interface FaultProxy {
  /** `http://127.0.0.1:<port>`: the relay as the page sees it. */
  origin: string;
  /** Chooses the fault of each `/v3/` request from now on; `() => 'pass'` for none. */
  setFaults(choose: (path: string) => Fault): void;
  /** The `/v3/` requests that reached the proxy, with their fault. */
  readonly seen: ReadonlyArray<{ path: string; fault: Fault; beacon: boolean }>;
  /**
   * The records the relay accepted, in its own words: each record of a request that it answered
   * with a result that is not a duplicate, whether or not the page then saw the answer.
   */
  readonly accepted: ReadonlyArray<{ kind: string; record: Record<string, unknown> }>;
  close(): Promise<void>;
}

/**
 * A network between a page and the relay that fails as mobile networks do: a request refused
 * before it reaches the relay, an answer lost after the relay stored the records (the page sees
 * a reset connection), a 503 with `Retry-After`, a slow answer. Anything outside `/v3/` (the SDK
 * script itself) passes untouched.
 */
export async function startFaultProxy(relay: string): Promise<FaultProxy> {
  const target = new URL(relay);
  let choose: (path: string) => Fault = () => 'pass';
  const seen: Array<{ path: string; fault: Fault; beacon: boolean }> = [];
  const accepted: Array<{ kind: string; record: Record<string, unknown> }> = [];
  const account = (path: string, body: Buffer, status: number, answer: Buffer) => {
    if (status < 200 || status > 299 || !path.startsWith('/v3/')) return;
    const sent = JSON.parse(body.toString('utf8')) as unknown;
    const records = (Array.isArray(sent) ? sent : [sent]) as Array<Record<string, unknown>>;
    const { results } = JSON.parse(answer.toString('utf8')) as { results: Array<{ id?: string; duplicate?: boolean }> };
    results.forEach((r, i) => r.id !== undefined && !r.duplicate && accepted.push({ kind: path.slice('/v3/'.length), record: records[i]! }));
  };
  const sockets = new Set<Socket>();

  const forward = (req: IncomingMessage, body: Buffer, done: (status: number, headers: IncomingMessage['headers'], answer: Buffer) => void, failed: () => void) => {
    const upstream = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on('data', (c: Buffer) => chunks.push(c));
      answer.on('end', () => {
        const text = Buffer.concat(chunks);
        account((req.url ?? '/').split('?')[0]!, body, answer.statusCode ?? 502, text);
        done(answer.statusCode ?? 502, answer.headers, text);
      });
      answer.on('error', failed);
    });
    upstream.on('error', failed);
    upstream.end(body);
  };

  const handle = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const fault: Fault = path.startsWith('/v3/') && req.method === 'POST' ? choose(path) : 'pass';
    if (path.startsWith('/v3/')) seen.push({ path, fault, beacon: req.headers['sec-fetch-mode'] === 'no-cors' });
    if (process.env.SDK_PROPERTY_DEBUG && path.startsWith('/v3/')) console.log(Date.now() % 100000, fault, path, req.headers['sec-fetch-mode'], body.toString().replace(/"(landing_page|referrer|language|screen|url|path|title|_event_at)":"[^"]*",?/g, '').slice(0, 400));
    const reply = (status: number, headers: IncomingMessage['headers'], answer: Buffer) => {
      res.writeHead(status, headers);
      res.end(answer);
    };
    const reset = () => req.socket.destroy();
    switch (fault) {
      case 'refuse':
        return reset();
      case 'busy': {
        const cors = { 'Access-Control-Allow-Origin': req.headers.origin ?? '*', 'Access-Control-Expose-Headers': 'Retry-After', Vary: 'Origin' };
        return void res.writeHead(503, { ...cors, 'Retry-After': '1', 'Content-Type': 'application/json' }).end('{"error":{"code":"ERR_QUEUE_UNAVAILABLE","message":"busy"}}');
      }
      case 'lose-answer':
        return forward(req, body, reset, reset);
      case 'slow':
        return void setTimeout(() => forward(req, body, reply, reset), 300 + Math.floor(Math.random() * 900));
      default:
        return forward(req, body, reply, reset);
    }
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks)));
    req.on('error', () => undefined);
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    setFaults: (fn) => {
      choose = fn;
    },
    seen,
    accepted,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
