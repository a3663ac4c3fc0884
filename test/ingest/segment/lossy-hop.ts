import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** What the hop does to one request: pass it, answer 503 itself, or forward it and lose the answer. */
export type HopFault = 'pass' | 'unavailable' | 'lose-answer';

export interface LossyHop {
  /** `http://127.0.0.1:<port>`: the relay as the client sees it. */
  url: string;
  /** The fault of each request from now on, by its order (0-based) and path. */
  setFaults(choose: (n: number, path: string) => HopFault): void;
  /** Every request that reached the hop: path, fault, and the headers the client sent. */
  readonly seen: ReadonlyArray<{ path: string; fault: HopFault; headers: IncomingMessage['headers'] }>;
  close(): Promise<void>;
}

/**
 * A network hop between a server-side SDK and the relay that fails as networks do: a 503 with
 * `Retry-After: 0` before the relay sees the request, or the relay's answer lost after it stored
 * the records (the client sees a reset connection and cannot know they were stored).
 */
export async function startLossyHop(relayPort: number): Promise<LossyHop> {
  let choose: (n: number, path: string) => HopFault = () => 'pass';
  const seen: Array<{ path: string; fault: HopFault; headers: IncomingMessage['headers'] }> = [];
  const sockets = new Set<Socket>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '/';
    const fault = choose(seen.length, path);
    seen.push({ path, fault, headers: req.headers });
    if (fault === 'unavailable') {
      req.resume();
      res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '0' }).end('{"code":"unavailable","message":"hop"}');
      return;
    }
    const upstream = request({ host: '127.0.0.1', port: relayPort, method: req.method, path, headers: req.headers }, (answer) => {
      if (fault === 'lose-answer') {
        answer.resume();
        answer.on('end', () => req.socket.destroy());
        return;
      }
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    setFaults: (c) => {
      choose = c;
    },
    seen,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
