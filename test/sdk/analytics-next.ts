import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';
import { build } from 'esbuild';
import type Koa from 'koa';

const ROOT = path.join(__dirname, '..', '..');

/**
 * `@segment/analytics-next` from node_modules as one classic script that puts `AnalyticsBrowser`
 * on `window`, as an application's bundler would build it (the npm entry, browser fields honoured).
 * Written to `dir/analytics-next.js`; about 350 KB, built in a fraction of a second.
 */
export async function bundleAnalyticsNext(dir: string): Promise<string> {
  const outfile = path.join(dir, 'analytics-next.js');
  await build({
    stdin: { contents: `import { AnalyticsBrowser } from '@segment/analytics-next';\nwindow.AnalyticsBrowser = AnalyticsBrowser;\n`, resolveDir: ROOT, loader: 'js' },
    bundle: true,
    format: 'iife',
    platform: 'browser',
    outfile,
    logLevel: 'error',
  });
  return outfile;
}

/** What the front does to one request: hand it to the relay, answer 503 itself, or drop the connection. */
export type FrontFault = 'pass' | 'unavailable' | 'refuse';

export interface FrontRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  fault: FrontFault;
  /** The answer's status and headers, once sent (0 and {} for a dropped connection). */
  status: number;
  answer: Record<string, string | string[] | number | undefined>;
}

export interface RelayFront {
  /** `http://127.0.0.1:<port>`: the relay as the page sees it. */
  origin: string;
  /** Chooses each request's fault from now on; `() => 'pass'` for none. */
  setFaults(choose: (method: string, path: string) => FrontFault): void;
  /** Every request that reached the front, in order. */
  readonly seen: readonly FrontRequest[];
  close(): Promise<void>;
}

/**
 * The relay's app on a port of its own, behind a front that can fail a request as a load balancer
 * or a broken network would (a 503 with `Retry-After: 0` and the relay's CORS headers, or a dropped
 * connection), and that logs every request, preflights included (the browser reports those to no
 * one else). Preflight answers get `Access-Control-Max-Age: 0`, so the browser caches none and
 * every send, a retry's with `X-Retry-Count` included, is preflighted by the relay itself.
 */
export async function startRelayFront(app: Koa): Promise<RelayFront> {
  const handle = app.callback();
  let choose: (method: string, path: string) => FrontFault = () => 'pass';
  const seen: FrontRequest[] = [];
  const sockets = new Set<Socket>();

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const method = req.method ?? 'GET';
    const path = (req.url ?? '/').split('?')[0]!;
    const entry: FrontRequest = { method, path, headers: req.headers, fault: choose(method, path), status: 0, answer: {} };
    seen.push(entry);
    res.on('finish', () => {
      entry.status = res.statusCode;
      entry.answer = res.getHeaders();
    });
    if (entry.fault === 'refuse') return void req.socket.destroy();
    if (entry.fault === 'unavailable') {
      req.resume();
      const error = { code: 'ERR_QUEUE_UNAVAILABLE', message: 'The front is unavailable.' };
      const cors = { 'Access-Control-Allow-Origin': req.headers.origin ?? '*', 'Access-Control-Allow-Credentials': 'true', 'Access-Control-Expose-Headers': 'Retry-After', Vary: 'Origin' };
      return void res.writeHead(503, { ...cors, 'Retry-After': '0', 'Content-Type': 'application/json' }).end(JSON.stringify({ success: false, ...error, error }));
    }
    if (method === 'OPTIONS') {
      const setHeader = res.setHeader.bind(res);
      res.setHeader = (name, value) => setHeader(name, name.toLowerCase() === 'access-control-max-age' ? '0' : value);
    }
    void handle(req, res);
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
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
