import Router from '@koa/router';
import type { Metrics } from '../core/metrics';

export interface OpsDeps {
  metrics: Metrics;
  /** Resolves when Redis answers a PING. */
  pingRedis: () => Promise<void>;
  /**
   * The exposition text /metrics serves. Default: this process's registry. In cluster mode, the
   * whole host's: every API process's metrics, summed by the primary (src/boot/cluster-metrics.ts).
   */
  hostMetrics?: () => Promise<string>;
}

/**
 * /healthz: this process is up (with its pid: in cluster mode each API process answers for
 * itself). /readyz: Redis answers. /metrics: Prometheus text.
 */
export function createOpsRouter(deps: OpsDeps): Router {
  const router = new Router();
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok', pid: process.pid };
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
    if (!deps.hostMetrics) {
      ctx.type = deps.metrics.registry.contentType;
      ctx.body = await deps.metrics.registry.metrics();
      return;
    }
    try {
      const text = await deps.hostMetrics();
      ctx.type = deps.metrics.registry.contentType;
      ctx.body = text;
    } catch (err) {
      // One process's figures would pass for the host's: answer nothing rather than a wrong total.
      ctx.status = 503;
      ctx.type = 'text/plain';
      ctx.body = `host metrics unavailable: ${(err as Error).message}\n`;
    }
  });
  return router;
}
