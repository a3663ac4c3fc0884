import Router from '@koa/router';
import type { Middleware } from 'koa';
import { redactedJson } from '../core/redact';
import { createAdminAuth } from './auth';
import { registerConnectorRoutes } from './connector-routes';
import type { AdminDeps } from './deps';
import { registerDestinationRoutes } from './destination-routes';
import { registerHealthRoutes } from './health-routes';
import { registerLiveRoutes } from './live-routes';
import { registerRequestRoutes } from './request-routes';
import { mapServiceErrors } from './service-errors';
import { registerSessionRoutes } from './session';
import { registerSourceRoutes } from './source-routes';
import { registerTrackerRoutes } from './tracker-routes';
import { registerTrafficRoutes } from './traffic-routes';
import { registerWarehouseRoutes } from './warehouse-routes';

function isStream(body: unknown): boolean {
  return typeof (body as { pipe?: unknown }).pipe === 'function';
}

/** Every admin answer passes here, so no route can forget to hide a destination's inline credentials. */
const redactBody: Middleware = async (ctx, next) => {
  await next();
  ctx.set('Cache-Control', 'no-store');
  if (typeof ctx.body === 'object' && ctx.body !== null && !Buffer.isBuffer(ctx.body) && !isStream(ctx.body)) {
    // As text, so that a record's integer beyond 2^53 (a dead letter's) reaches the client with its digits.
    ctx.body = redactedJson(ctx.body);
    ctx.type = 'application/json';
  }
};

/** The JSON API behind the owner's console, under `/admin/api`; every route needs the admin token. */
export function createAdminRouter(deps: AdminDeps): Router {
  const router = new Router({ prefix: '/admin/api' });
  router.use(createAdminAuth(deps.token), mapServiceErrors, redactBody);
  registerSessionRoutes(router, deps.token);
  registerTrackerRoutes(router, deps);
  registerDestinationRoutes(router, deps);
  registerSourceRoutes(router, deps);
  registerConnectorRoutes(router, deps);
  registerLiveRoutes(router, deps);
  registerRequestRoutes(router, deps);
  registerTrafficRoutes(router, deps);
  registerWarehouseRoutes(router, deps);
  registerHealthRoutes(router, deps);
  return router;
}
