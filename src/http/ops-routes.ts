import Router from '@koa/router';
import type { Metrics } from '../metrics';

export interface OpsDeps {
  metrics: Metrics;
  /** Resolves when Redis answers a PING. */
  pingRedis: () => Promise<void>;
}

/** /healthz: the process is up. /readyz: Redis answers. /metrics: Prometheus text. */
export function createOpsRouter(deps: OpsDeps): Router {
  const router = new Router();
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    try {
      await deps.pingRedis();
      ctx.body = { status: 'ready', redis: 'ok' };
    } catch (err) {
      ctx.status = 503;
      ctx.body = { status: 'unavailable', redis: (err as Error).message };
    }
  });
  router.get('/metrics', async (ctx) => {
    ctx.type = deps.metrics.registry.contentType;
    ctx.body = await deps.metrics.registry.metrics();
  });
  return router;
}
