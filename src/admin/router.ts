import Router from '@koa/router';
import type { Middleware } from 'koa';
import { redactSecrets } from '../trackers/redact';
import { createAdminAuth } from './auth';
import type { AdminDeps } from './deps';
import { registerDestinationRoutes } from './destination-routes';
import { mapServiceErrors } from './service-errors';
import { registerTrackerRoutes } from './tracker-routes';

/** Every admin answer passes here, so no route can forget to hide a destination's inline credentials. */
const redactBody: Middleware = async (ctx, next) => {
  await next();
  if (typeof ctx.body === 'object' && ctx.body !== null && !Buffer.isBuffer(ctx.body)) ctx.body = redactSecrets(ctx.body);
};

/** The JSON API behind the owner's console, under `/admin/api`; every route needs the admin token. */
export function createAdminRouter(deps: AdminDeps): Router {
  const router = new Router({ prefix: '/admin/api' });
  router.use(createAdminAuth(deps.token), mapServiceErrors, redactBody);
  registerTrackerRoutes(router, deps);
  registerDestinationRoutes(router, deps);
  return router;
}
