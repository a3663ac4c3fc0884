import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type Koa from 'koa';
import type { Config } from '../core/config';
import { answerClientError } from '../http/client-error';

export interface ApiServer {
  server: Server;
  /**
   * Stops accepting connections; requests in progress finish (their records reach Redis) within
   * half of SHUTDOWN_TIMEOUT_MS, then every connection left is closed.
   */
  close: () => Promise<void>;
}

/** Serves the app on `HOST:PORT`; in a cluster child the port is shared through the primary. */
export async function listenApi(app: Koa, config: Readonly<Config>): Promise<ApiServer> {
  const server = createServer({ maxHeaderSize: config.limits.headerBytes }, app.callback());
  server.on('clientError', answerClientError);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    server,
    close: async () => {
      // A keep-alive client would go on sending on its connection until the grace runs out:
      // what is under way is answered with `Connection: close`, and the client reconnects elsewhere.
      server.on('request', (_req: IncomingMessage, res: ServerResponse) => {
        if (!res.headersSent) res.setHeader('Connection', 'close');
      });
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const grace = new Promise<void>((resolve) => setTimeout(resolve, config.shutdownTimeoutMs / 2).unref());
      await Promise.race([closed, grace]);
      server.closeAllConnections();
    },
  };
}
