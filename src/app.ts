import cors from '@koa/cors';
import Koa from 'koa';
import type { AdminDeps } from './admin/deps';
import { createAdminRouter } from './admin/router';
import type { Config } from './config';
import { createErrorHandler, ERROR_HEADER } from './http/error-handler';
import { createOpsRouter } from './http/ops-routes';
import { createV3Router } from './http/v3-routes';
import type { Logger } from './logger';
import type { Metrics } from './metrics';
import type { IngestWriter } from './queue/ingest-writer';
import type { RateLimiter } from './trackers/rate-limiter';
import type { TrackerResolver } from './trackers/resolver';

export interface AppDeps {
  config: Readonly<Config>;
  logger: Logger;
  metrics: Metrics;
  resolver: TrackerResolver;
  writer: IngestWriter;
  rateLimiter: RateLimiter;
  pingRedis: () => Promise<void>;
  /** Services of the admin API; without them `/admin/api` answers 404 (worker-less tests, embedders). */
  admin?: AdminDeps;
}

/**
 * Builds the Koa application without listening, so tests drive `app.callback()` directly.
 * CORS answers every origin at the HTTP level (preflights carry no token to look a tracker up by);
 * a tracker's own origin list is enforced on the request itself with a 403.
 */
export function createApp(deps: AppDeps): Koa {
  const app = new Koa({ proxy: deps.config.trustProxy });
  app.silent = true;
  const v3 = createV3Router(deps);
  const ops = createOpsRouter(deps);

  app.use(createErrorHandler(deps.logger, deps.metrics));
  app.use(
    cors({
      origin: (ctx) => ctx.get('Origin'),
      allowMethods: ['GET', 'POST', 'HEAD', 'OPTIONS'],
      allowHeaders: ['Authorization', 'Content-Type', 'Content-Encoding'],
      exposeHeaders: [ERROR_HEADER, 'Retry-After'],
      credentials: true,
      maxAge: 600,
    }),
  );
  app.use(v3.routes());
  app.use(v3.allowedMethods());
  app.use(ops.routes());
  app.use(ops.allowedMethods());
  if (deps.admin) {
    const admin = createAdminRouter(deps.admin);
    app.use(admin.routes());
    app.use(admin.allowedMethods());
  }
  return app;
}
