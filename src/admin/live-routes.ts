import { PassThrough } from 'node:stream';
import type { AdminDeps } from './deps';
import type { GuardedRoutes } from './guarded-routes';
import { stillAllowed } from './auth';

/** Proxies and load balancers drop a connection that stays silent; a comment line keeps it open. */
const KEEP_ALIVE_MS = 15_000;
const RECHECK_MS = 1000;

/**
 * `GET /trackers/:id/live`: the tracker's v3 requests as server-sent events, from the moment of
 * connecting (`event: ready`), one `event: request` each (data: a LiveEntry, src/http/live/live-entry.ts).
 * No history: what arrived before the connection is in the destinations.
 */
export function registerLiveRoutes(routes: GuardedRoutes, deps: AdminDeps): void {
  routes.get('/trackers/:id/live', 'tracker:payloads', async (ctx) => {
    const tracker = await deps.trackers.getTracker(ctx.params.id!);
    const stream = new PassThrough();
    const unsubscribe = await deps.live.subscribe(tracker.id, (entryJson) => stream.write(`event: request\ndata: ${entryJson}\n\n`));
    // The viewer may have gone while this subscribed: no 'close' event would come for it now.
    if (ctx.req.socket.destroyed) {
      unsubscribe();
      return;
    }
    const keepAlive = setInterval(() => stream.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
    // A stream outlives the request that opened it: a revoked token, an ended session or a lost role closes it within a second.
    const recheck = setInterval(() => {
      stillAllowed(ctx, 'tracker:payloads').then((ok) => ok || stop(), () => undefined);
    }, RECHECK_MS);
    const stop = (): void => {
      clearInterval(keepAlive);
      clearInterval(recheck);
      unsubscribe();
      forget();
      stream.end();
    };
    const forget = deps.live.onClose(stop);
    ctx.req.on('close', stop);

    ctx.req.socket.setTimeout(0);
    ctx.req.socket.setNoDelay(true);
    ctx.set('Content-Type', 'text/event-stream; charset=utf-8');
    ctx.set('Cache-Control', 'no-store');
    // nginx would otherwise hold events back in its buffer.
    ctx.set('X-Accel-Buffering', 'no');
    ctx.status = 200;
    ctx.body = stream;
    stream.write(`retry: 2000\nevent: ready\ndata: ${JSON.stringify({ trackerId: tracker.id })}\n\n`);
  });
}
