import Router from '@koa/router';
import type { Metrics } from '../core/metrics';
import type { MemorySnapshot } from '../core/redis/memory-budget';

export interface OpsDeps {
  metrics: Metrics;
  /** Resolves when Redis answers a PING. */
  pingRedis: () => Promise<void>;
  /** The Redis memory budget's last sample; none: memory is not reported. */
  memory?: () => MemorySnapshot;
  /**
   * The exposition text /metrics serves. Default: this process's registry. In cluster mode, the
   * whole host's: every API process's metrics, summed by the primary (src/boot/cluster-metrics.ts).
   */
  hostMetrics?: () => Promise<string>;
}

/**
 * /healthz: this process is up (with its pid: in cluster mode each API process answers for
 * itself). /readyz: Redis answers and its memory is below the high watermark (a relay that
 * refuses ingest for memory is not ready: a load balancer should send traffic elsewhere).
 * /metrics: Prometheus text.
 */
export function createOpsRouter(deps: OpsDeps): Router {
  const router = new Router();
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok', pid: process.pid };
  });
  router.get('/readyz', async (ctx) => {
    try {
      await deps.pingRedis();
    } catch (err) {
      ctx.status = 503;
      ctx.body = { status: 'unavailable', redis: (err as Error).message };
      return;
    }
    const memory = deps.memory?.();
    if (memory?.state === 'full') {
      ctx.status = 503;
      ctx.body = { status: 'full', redis: 'ok', memory };
      return;
    }
    ctx.body = { status: 'ready', redis: 'ok', ...(memory ? { memory } : {}) };
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
