import * as z from 'zod';
import type { AdminDeps } from './deps';
import type { GuardedRoutes } from './guarded-routes';
import { readBody } from './json-body';

/** A console table shows a screenful; more rows belong in `tributary export`. */
export const QUERY_ROW_LIMIT = 1000;

const QueryBody = z.strictObject({
  sql: z.string().trim().min(1, 'write a query').max(20_000),
  /** The local destination to read; needed only when the tracker has several. */
  destination: z.string().min(1).optional(),
});

/** Read-only SQL on the tracker's local warehouse, as `tributary query` runs it. */
export function registerWarehouseRoutes(routes: GuardedRoutes, deps: AdminDeps): void {
  routes.post('/trackers/:id/query', 'tracker:payloads', async (ctx) => {
    const { sql, destination } = await readBody(ctx, QueryBody);
    ctx.body = await deps.delivery.query(ctx.params.id!, sql, destination, QUERY_ROW_LIMIT);
  });
}
