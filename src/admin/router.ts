import Router from '@koa/router';
import type { Logger } from '../core/logger';
import { redactAnswers } from './answer-redaction';
import { createAccessControl } from './audit-middleware';
import { registerAuditRoutes } from './audit-routes';
import { guard } from './auth';
import { registerConnectorRoutes } from './connector-routes';
import type { AdminDeps } from './deps';
import { registerDestinationRoutes } from './destination-routes';
import { GuardedRoutes } from './guarded-routes';
import { registerHealthRoutes } from './health-routes';
import { registerLiveRoutes } from './live-routes';
import { registerPeopleRoutes } from './people-routes';
import { registerRequestRoutes } from './request-routes';
import { mapServiceErrors } from './service-errors';
import { registerSessionRoutes } from './session-routes';
import { registerSourceRoutes } from './source-routes';
import { registerTrackerRoutes } from './tracker-routes';
import { registerTrafficRoutes } from './traffic-routes';
import { registerWarehouseRoutes } from './warehouse-routes';

export const ADMIN_PREFIX = '/admin/api';

/**
 * The JSON API behind the owner's console, under `/admin/api`. Every route declares the permission
 * it needs (guarded-routes.ts); a request is authenticated, checked against it and audited
 * (audit-middleware.ts) before its route runs.
 */
export function createAdminRouter(deps: AdminDeps, logger: Logger): { router: Router; routes: GuardedRoutes } {
  const router = new Router({ prefix: ADMIN_PREFIX });
  const routes = new GuardedRoutes(router, ADMIN_PREFIX, guard);
  router.use(createAccessControl({ routes, authenticator: deps.access.authenticator, audit: deps.access.audit, logger, prefix: ADMIN_PREFIX }), mapServiceErrors, redactAnswers);
  registerSessionRoutes(routes, deps);
  registerPeopleRoutes(routes, deps);
  registerAuditRoutes(routes, deps);
  registerTrackerRoutes(routes, deps);
  registerDestinationRoutes(routes, deps);
  registerSourceRoutes(routes, deps);
  registerConnectorRoutes(routes, deps);
  registerLiveRoutes(routes, deps);
  registerRequestRoutes(routes, deps);
  registerTrafficRoutes(routes, deps);
  registerWarehouseRoutes(routes, deps);
  registerHealthRoutes(routes, deps);
  return { router, routes };
}
