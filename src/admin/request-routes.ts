import * as z from 'zod';
import { STATUS_FILTER } from '../core/requests/request-history';
import type { AdminDeps } from './deps';
import type { GuardedRoutes } from './guarded-routes';
import { parseInput } from './json-body';

/** The search of both lists; every criterion given must hold. */
export const RequestQuery = z.strictObject({
  status: z.string().regex(STATUS_FILTER, 'a status (401), a class (4xx), accepted or refused').optional(),
  code: z.string().regex(/^ERR_[A-Z0-9_]+$/i, 'an error code, e.g. ERR_INVALID_FIELD').optional(),
  text: z.string().max(200).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

/**
 * A tracker's last requests, accepted and refused, and the relay's requests with an unknown or
 * revoked token (src/http/history/history-recorder.ts writes both), newest first.
 */
export function registerRequestRoutes(routes: GuardedRoutes, deps: AdminDeps): void {
  routes.get('/trackers/:id/requests', 'tracker:payloads', async (ctx) => {
    const filter = parseInput(RequestQuery, ctx.query, 'query');
    const tracker = await deps.trackers.getTracker(ctx.params.id!);
    ctx.body = await deps.requests.list(tracker.id, filter);
  });

  routes.get('/requests/unknown-token', 'relay:admin', async (ctx) => {
    ctx.body = await deps.requests.listUnknownToken(parseInput(RequestQuery, ctx.query, 'query'));
  });
}
