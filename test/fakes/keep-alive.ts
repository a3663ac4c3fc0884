import type { Server } from 'node:http';

/**
 * Google's front ends keep an idle keep-alive connection for about ten minutes (610 s behind its
 * load balancers); Node's HTTP server closes one after 5 s. With Node's default a client that reuses
 * a pooled connection just as the fake closes it reads ECONNRESET, which Google's servers would not
 * have caused: a loaded test machine made that happen between two calls of one test.
 */
export function keepIdleConnectionsAsGoogle(server: Server): void {
  server.keepAliveTimeout = 610_000;
}
