import Router from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
import { ApiError } from '../errors';
import { RECORD_KINDS, type RecordKind } from '../records/types';
import { FIXED_SUFFIXES, sendFixed, type FixedResponse } from './fixed-responses';
import { ingest, type IngestDeps, type IngestOutcome } from './ingest-route';
import { createReadBody } from './read-body';

function renderJson(ctx: Context, outcome: IngestOutcome, batch: boolean): void {
  const { accepted, results } = outcome;
  if (!batch) {
    const only = results[0]!;
    if ('error' in only) throw new ApiError(only.error.code, only.error.message, only.error.field);
    ctx.status = 202;
    ctx.body = { accepted: 1, id: only.id };
    return;
  }
  const rejected = results.length - accepted.length;
  if (accepted.length === 0) {
    ctx.status = 400;
    ctx.body = { error: { code: 'ERR_NO_VALID_RECORDS', message: 'No record in the request was valid; see results.' }, accepted: 0, rejected, results };
    return;
  }
  ctx.status = 202;
  ctx.body = { accepted: accepted.length, rejected, results };
}

/**
 * `/v3/{user,session,event}` by GET and POST, and `/tracker.gif` / `/tracker.js` under each.
 * HEAD answers the headers of GET and stores nothing: link checkers and monitors send HEAD.
 */
export function createV3Router(deps: IngestDeps): Router {
  const router = new Router({ prefix: '/v3' });
  const readBody = createReadBody(deps.config.limits);

  const jsonRoute = (kind: RecordKind) => async (ctx: Context) => {
    if (ctx.method === 'HEAD') {
      ctx.status = 204;
      return;
    }
    const outcome = await ingest(ctx, kind, deps);
    renderJson(ctx, outcome, outcome.batch);
  };

  const fixedRoute = (kind: RecordKind, fixed: FixedResponse) => async (ctx: Context) => {
    ctx.state.fixed = fixed;
    if (ctx.method !== 'HEAD') {
      const outcome = await ingest(ctx, kind, deps);
      if (outcome.accepted.length === 0) {
        const first = outcome.results.find((r) => 'error' in r);
        if (first && 'error' in first) throw new ApiError(first.error.code, first.error.message, first.error.field);
      }
    }
    sendFixed(ctx, fixed, 200);
  };

  for (const kind of RECORD_KINDS) {
    router.get(`/${kind}`, readBody, jsonRoute(kind));
    router.post(`/${kind}`, readBody, jsonRoute(kind));
    for (const fixed of Object.keys(FIXED_SUFFIXES) as FixedResponse[]) {
      router.get(`/${kind}/${FIXED_SUFFIXES[fixed]}`, readBody, fixedRoute(kind, fixed));
    }
  }
  return router;
}

/** Runs a route's middleware in order, as the router would once it has matched the route. */
function chain(stack: Middleware[]): Middleware {
  return (ctx: Context, next: Next) => {
    const step = async (i: number): Promise<void> => (i < stack.length ? stack[i]!(ctx, () => step(i + 1)) : next());
    return step(0);
  };
}

/**
 * The router's middleware, except that a request whose method and path are exactly those of a
 * route runs that route at once. On each request @koa/router tests every route's pattern, parses
 * the Host header and composes a new chain (about 3 µs of the ~110 µs an ingest request costs,
 * see bench/RESULTS.md); a request it would treat differently (trailing slash, other casing,
 * OPTIONS, unknown path) still goes through it. Only `_matchedRoute`, the metrics label, is set
 * as the router sets it.
 */
export function exactRoutes(router: Router): Middleware {
  const routes = router.routes() as Middleware;
  const table = new Map<string, Middleware>();
  const repeated = new Set<string>();
  for (const layer of router.stack) {
    // A router.use() middleware or a parameterised path: matching is the router's business.
    if (typeof layer.path !== 'string' || layer.paramNames.length > 0 || layer.methods.length === 0) return routes;
    const path = layer.path;
    const run = chain(layer.stack as Middleware[]);
    const route: Middleware = (ctx, next) => {
      (ctx as { _matchedRoute?: string })._matchedRoute = path;
      return run(ctx, next);
    };
    for (const method of layer.methods) {
      const key = `${method} ${path}`;
      if (table.has(key)) repeated.add(key);
      table.set(key, route);
    }
  }
  // Two layers on one method and path run in sequence under the router; leave those to it.
  for (const key of repeated) table.delete(key);
  return (ctx, next) => (table.get(`${ctx.method} ${ctx.path}`) ?? routes)(ctx, next);
}
