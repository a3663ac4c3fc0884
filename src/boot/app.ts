import cors from '@koa/cors';
import Koa from 'koa';
import type { AdminDeps } from '../admin/deps';
import { createConsoleRouter } from '../admin/console-assets';
import { createAdminRouter } from '../admin/router';
import type { Config } from '../core/config';
import { createErrorHandler, ERROR_HEADER } from '../http/error-handler';
import { observeFinishedRequests } from '../http/request-observers';
import { createOpsRouter } from '../http/ops-routes';
import { createOpenApiRouter } from '../http/openapi/document';
import { createSdkRouter } from '../http/sdk-routes';
import { createAnalyticsJsRouter } from '../http/analytics-js-routes';
import { createV3Router } from '../ingest/v3-routes';
import { createImportRouter } from '../ingest/import-route';
import type { ImportSink } from '../core/import/importer';
import { createWebhookRouter } from '../ingest/webhooks/route';
import { createSegmentRouter } from '../ingest/segment/segment-routes';
import type { HistoryRecorder } from '../http/history/history-recorder';
import type { TrafficCounter } from '../http/traffic/traffic-counter';
import type { LiveFeed } from '../http/live/live-feed';
import type { Logger } from '../core/logger';
import type { Metrics } from '../core/metrics';
import type { MemorySnapshot } from '../core/redis/memory-budget';
import type { IngestWriter } from '../ingest/ingest-writer';
import type { RateLimiter } from '../ingest/rate-limiter';
import type { TrackerResolver } from '../ingest/resolver';
import type { SourceDeliveryLog } from '../core/trackers/source-deliveries';

export interface AppDeps {
  config: Readonly<Config>;
  logger: Logger;
  metrics: Metrics;
  resolver: TrackerResolver;
  writer: IngestWriter;
  rateLimiter: RateLimiter;
  pingRedis: () => Promise<void>;
  /** The Redis memory budget's last sample, for /readyz (see src/core/redis/memory-budget.ts). */
  memory?: () => MemorySnapshot;
  /** What /metrics serves; default this process's registry (see src/http/ops-routes.ts). */
  hostMetrics?: () => Promise<string>;
  /** Services of the admin API; without them `/admin/api` answers 404 (worker-less tests, embedders). */
  admin?: AdminDeps;
  /** Shows v3 requests to the console's live view. */
  live?: LiveFeed;
  /** Keeps the last requests of each tracker, and those with an unknown token. */
  history?: HistoryRecorder;
  /** Counts each tracker's records per minute for the console's pictures over time. */
  traffic?: TrafficCounter;
  /** Keeps the verdicts of each webhook source's last deliveries. */
  deliveryLog?: SourceDeliveryLog;
  /** The history lane that `POST /v3/import/…` writes to (jobs/history/import-lane.ts); without it those paths answer 404. */
  importSink?: ImportSink;
}

/**
 * Builds the Koa application without listening, so tests drive `app.callback()` directly.
 * CORS answers every origin at the HTTP level on the tracker paths (preflights carry no token to
 * look a tracker up by); a tracker's own origin list is enforced on the request itself with a 403.
 */
export function createApp(deps: AppDeps): Koa {
  const app = new Koa({ proxy: deps.config.trustProxy });
  app.silent = true;
  const v3 = createV3Router(deps);
  const ops = createOpsRouter(deps);

  // Outside the error handler: the live view shows the answer the client got, errors included.
  app.use(observeFinishedRequests([deps.traffic, deps.history, deps.live]));
  app.use(createErrorHandler(deps.logger, deps.metrics, deps.config.retryAfterSeconds));
  const trackerCors = cors({
    origin: (ctx) => ctx.get('Origin'),
    allowMethods: ['GET', 'POST', 'HEAD', 'OPTIONS'],
    // X-Retry-Count: analytics-next ≥ 1.84 sends it on every retry, so a preflight without it fails the retry.
    allowHeaders: ['Authorization', 'Content-Type', 'Content-Encoding', 'Idempotency-Key', 'X-Retry-Count'],
    exposeHeaders: [ERROR_HEADER, 'Retry-After'],
    credentials: true,
    maxAge: 600,
  });
  // The console and its API are same-origin only: no other page may read them with the cookie.
  app.use((ctx, next) => (ctx.path.startsWith('/admin') ? next() : trackerCors(ctx, next)));
  if (deps.importSink) {
    const imports = createImportRouter({ ...deps, importSink: deps.importSink });
    app.use(imports.routes());
    app.use(imports.allowedMethods());
  }
  app.use(v3.routes());
  app.use(v3.allowedMethods());
  const segment = createSegmentRouter(deps);
  app.use(segment.routes());
  app.use(segment.allowedMethods());
  const webhooks = createWebhookRouter(deps);
  app.use(webhooks.routes());
  app.use(webhooks.allowedMethods());
  app.use(ops.routes());
  app.use(ops.allowedMethods());
  const sdk = createSdkRouter();
  app.use(sdk.routes());
  app.use(sdk.allowedMethods());
  const analyticsJs = createAnalyticsJsRouter();
  app.use(analyticsJs.routes());
  app.use(analyticsJs.allowedMethods());
  const openapi = createOpenApiRouter();
  app.use(openapi.routes());
  app.use(openapi.allowedMethods());
  if (deps.admin) {
    const { router: admin } = createAdminRouter(deps.admin, deps.logger);
    app.use(admin.routes());
    app.use(admin.allowedMethods());
    const consolePages = createConsoleRouter();
    app.use(consolePages.routes());
    app.use(consolePages.allowedMethods());
  }
  return app;
}
