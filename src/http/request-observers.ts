import type { Middleware } from 'koa';
import type { HttpContext, RequestState } from '../core/requests/request-state';
import { isSegmentPath } from '../ingest/segment/segment-answers';

/** Sees each finished v3 or `/v1` (Segment) request (the live view, the request history, the traffic counts). */
export interface RequestObserver {
  /** Called once the answer is final, errors included; must not throw or wait. */
  observe(ctx: HttpContext): void;
}

/**
 * Outermost middleware: hands every v3 request to each observer once its answer is final, error
 * answers included (so it sits outside the error handler). One middleware for all of them: each
 * layer of Koa's chain is an async frame every request pays for.
 */
export function observeFinishedRequests(observers: ReadonlyArray<RequestObserver | undefined>): Middleware<RequestState> {
  const present = observers.filter((o): o is RequestObserver => o !== undefined);
  return async (ctx, next) => {
    await next();
    if (ctx.method === 'OPTIONS' || ctx.method === 'HEAD' || !(ctx.path.startsWith('/v3/') || isSegmentPath(ctx.path))) return;
    for (const observer of present) observer.observe(ctx);
  };
}
