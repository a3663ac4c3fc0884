import type { AdminDeps } from './deps';
import type { GuardedRoutes } from './guarded-routes';

/**
 * The pictures over time: a tracker's records per minute over the last 24 hours, and a
 * destination's deliveries, backlog and lag with the moments its state changed.
 */
export function registerTrafficRoutes(routes: GuardedRoutes, deps: AdminDeps): void {
  routes.get('/trackers/:id/traffic', 'tracker:view', async (ctx) => {
    const tracker = await deps.trackers.getTracker(ctx.params.id!);
    ctx.body = await deps.traffic.read(tracker.id);
  });

  routes.get('/trackers/:id/destinations/:dest/traffic', 'tracker:view', async (ctx) => {
    ctx.body = await deps.delivery.traffic(ctx.params.id!, ctx.params.dest!);
  });
}
