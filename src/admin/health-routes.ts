import type { AdminDeps } from './deps';
import type { GuardedRoutes } from './guarded-routes';

/** The relay as a whole, for the console's health view: Redis memory against its budget. */
export function registerHealthRoutes(routes: GuardedRoutes, deps: AdminDeps): void {
  routes.get('/health', 'signed-in', (ctx) => {
    ctx.body = { memory: deps.memory() };
  });
}
