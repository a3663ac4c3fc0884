import type Router from '@koa/router';
import type { AdminDeps } from './deps';

/**
 * The pictures over time: a tracker's records per minute over the last 24 hours, and a
 * destination's deliveries, backlog and lag with the moments its state changed.
 */
export function registerTrafficRoutes(router: Router, deps: AdminDeps): void {
  router.get('/trackers/:id/traffic', async (ctx) => {
    const tracker = await deps.trackers.getTracker(ctx.params.id!);
    ctx.body = await deps.traffic.read(tracker.id);
  });

  router.get('/trackers/:id/destinations/:dest/traffic', async (ctx) => {
    ctx.body = await deps.delivery.traffic(ctx.params.id!, ctx.params.dest!);
  });
}
