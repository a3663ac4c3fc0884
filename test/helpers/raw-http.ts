import { createServer, request, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import type Koa from 'koa';

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface RawRequest {
  method?: string;
  path: string;
  headers?: OutgoingHttpHeaders;
  /** A Buffer is sent with its Content-Length; a stream is sent chunked. */
  body?: Buffer | Readable;
}

export interface Listening {
  port: number;
  request: (req: RawRequest) => Promise<RawResponse>;
  close: () => Promise<void>;
}

/**
 * Serves the app on an ephemeral port and talks to it with node:http, which (unlike supertest)
 * sends exactly the headers given: no Content-Type, chunked bodies, any method.
 * Errors while sending a body after the answer has arrived (the server closed early) are ignored.
 */
export async function listen(app: Koa): Promise<Listening> {
  const server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const send = ({ method = 'GET', path, headers = {}, body }: RawRequest): Promise<RawResponse> =>
    new Promise((resolve, reject) => {
      const hdrs: OutgoingHttpHeaders = { ...headers };
      if (Buffer.isBuffer(body) && hdrs['content-length'] === undefined) hdrs['content-length'] = body.length;
      const req = request({ host: '127.0.0.1', port, method, path, headers: hdrs, agent: false });
      let answered = false;
      req.on('response', (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      });
      req.on('error', (err) => {
        if (!answered) reject(err);
      });
      if (body === undefined) req.end();
      else if (Buffer.isBuffer(body)) req.end(body);
      else {
        body.on('error', () => undefined);
        body.pipe(req);
        req.on('response', () => body.unpipe(req));
      }
    });

  return {
    port,
    request: send,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function json(res: RawResponse): unknown {
  return JSON.parse(res.body.toString('utf8'));
}
