import { Readable } from 'node:stream';
import { AuditQuerySchema } from '../core/access/audit-log';
import type { AdminDeps } from './deps';
import type { GuardedRoutes } from './guarded-routes';
import { parseInput } from './json-body';
import * as z from 'zod';

const ExportQuery = z.object({ since: z.iso.datetime({ offset: true }).optional() });

/** The audit log: all of it for admins; a tracker's entries for its editors. */
export function registerAuditRoutes(routes: GuardedRoutes, deps: AdminDeps): void {
  const { audit } = deps.access;

  routes.get('/audit', 'relay:admin', async (ctx) => {
    ctx.body = { entries: await audit.list(parseInput(AuditQuerySchema, ctx.query, 'query')) };
  });

  // JSON lines, oldest first: for a SIEM or an archive of one's own.
  routes.get('/audit/export', 'relay:admin', async (ctx) => {
    const { since } = parseInput(ExportQuery, ctx.query, 'query');
    ctx.type = 'application/x-ndjson';
    ctx.set('Content-Disposition', 'attachment; filename="tributary-audit.jsonl"');
    ctx.body = Readable.from((async function* lines() {
      for await (const entry of audit.all(since)) yield `${JSON.stringify(entry)}\n`;
    })());
  });

  routes.get('/trackers/:id/audit', 'tracker:edit', async (ctx) => {
    const query = parseInput(AuditQuerySchema, ctx.query, 'query');
    ctx.body = { entries: await audit.list({ ...query, tracker: ctx.params.id! }) };
  });
}
