import type Router from '@koa/router';
import type { AdminDeps } from './deps';

/** The relay as a whole, for the console's health view: Redis memory against its budget. */
export function registerHealthRoutes(router: Router, deps: AdminDeps): void {
  router.get('/health', (ctx) => {
    ctx.body = { memory: deps.memory() };
  });
}
