import * as z from 'zod';
import { SourceMappingSchema } from '../core/trackers/types';
import type { AddSourceInput } from '../operator/source-service';
import { viewSource } from '../operator/source-view';
import type { AdminDeps } from './deps';
import type { GuardedRoutes } from './guarded-routes';
import { readBody, readJsonObject } from './json-body';
import { revealSecretsOnce } from './answer-redaction';

/** Only the mapping changes in place; a new type or hmac settings is a new source. */
const UpdateBody = z.strictObject({ mapping: SourceMappingSchema });

const RotateBody = z.strictObject({
  /** Required for Stripe, Shopify and Slack, which issue their own; generated for the others when omitted. */
  secret: z.string().optional(),
  /** How long the previous secret keeps working; default 24. */
  graceHours: z.number().min(0).optional(),
});

/**
 * Webhook sources of a tracker and their last deliveries. A signing secret the relay generated is in
 * the answer that made it (added, rotated) and nowhere after: to the sender's settings it goes
 * once. One the caller gave is never echoed back. The add body goes to SourceService as it
 * is: it checks it with its own strict schema, exactly as for the CLI, and its refusals name the field.
 */
export function registerSourceRoutes(routes: GuardedRoutes, deps: AdminDeps): void {
  const { sources, publicUrl } = deps;
  const base = '/trackers/:id/sources';

  routes.get(base, 'tracker:view', async (ctx) => {
    const id = ctx.params.id!;
    ctx.body = { sources: (await sources.list(id)).map((s) => viewSource(s, id, publicUrl)) };
  });

  routes.post(base, 'tracker:edit', async (ctx) => {
    const id = ctx.params.id!;
    const body = (await readJsonObject(ctx)) as AddSourceInput;
    const source = await sources.add(id, body);
    ctx.status = 201;
    if (body.secret === undefined) revealSecretsOnce(ctx);
    ctx.body = viewSource(source, id, publicUrl);
  });

  routes.get(`${base}/:source`, 'tracker:view', async (ctx) => {
    const { id, source } = ctx.params as { id: string; source: string };
    ctx.body = viewSource(await sources.get(id, source), id, publicUrl);
  });

  routes.patch(`${base}/:source`, 'tracker:edit', async (ctx) => {
    const { id, source } = ctx.params as { id: string; source: string };
    const { mapping } = await readBody(ctx, UpdateBody);
    ctx.body = viewSource(await sources.setMapping(id, source, mapping), id, publicUrl);
  });

  routes.post(`${base}/:source/rotate-secret`, 'tracker:edit', async (ctx) => {
    const { id, source } = ctx.params as { id: string; source: string };
    const body = await readBody(ctx, RotateBody);
    if (body.secret === undefined) revealSecretsOnce(ctx);
    ctx.body = viewSource(await sources.rotateSecret(id, source, body), id, publicUrl);
  });

  routes.delete(`${base}/:source`, 'tracker:edit', async (ctx) => {
    const { id, source } = ctx.params as { id: string; source: string };
    await sources.remove(id, source);
    ctx.body = { removed: source };
  });

  routes.get(`${base}/:source/deliveries`, 'tracker:payloads', async (ctx) => {
    const { id, source } = ctx.params as { id: string; source: string };
    ctx.body = { deliveries: await sources.deliveries(id, source) };
  });
}
