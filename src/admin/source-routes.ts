import type Router from '@koa/router';
import * as z from 'zod';
import { SourceMappingSchema } from '../core/trackers/types';
import type { AddSourceInput } from '../operator/source-service';
import { viewSource } from '../operator/source-view';
import type { AdminDeps } from './deps';
import { readBody, readJsonObject } from './json-body';

/** Only the mapping changes in place; a new type or hmac settings is a new source. */
const UpdateBody = z.strictObject({ mapping: SourceMappingSchema });

const RotateBody = z.strictObject({
  /** Required for Stripe, Shopify and Slack, which issue their own; generated for the others when omitted. */
  secret: z.string().optional(),
  /** How long the previous secret keeps working; default 24. */
  graceHours: z.number().min(0).optional(),
});

/**
 * Webhook sources of a tracker and their last deliveries. The add body goes to SourceService as it
 * is: it checks it with its own strict schema, exactly as for the CLI, and its refusals name the field.
 */
export function registerSourceRoutes(router: Router, deps: AdminDeps): void {
  const { sources, publicUrl } = deps;
  const base = '/trackers/:id/sources';

  router.get(base, async (ctx) => {
    const id = ctx.params.id!;
    ctx.body = { sources: (await sources.list(id)).map((s) => viewSource(s, id, publicUrl)) };
  });

  router.post(base, async (ctx) => {
    const id = ctx.params.id!;
    const source = await sources.add(id, (await readJsonObject(ctx)) as AddSourceInput);
    ctx.status = 201;
    ctx.body = viewSource(source, id, publicUrl);
  });

  router.get(`${base}/:source`, async (ctx) => {
    const { id, source } = ctx.params as { id: string; source: string };
    ctx.body = viewSource(await sources.get(id, source), id, publicUrl);
  });

  router.patch(`${base}/:source`, async (ctx) => {
    const { id, source } = ctx.params as { id: string; source: string };
    const { mapping } = await readBody(ctx, UpdateBody);
    ctx.body = viewSource(await sources.setMapping(id, source, mapping), id, publicUrl);
  });

  router.post(`${base}/:source/rotate-secret`, async (ctx) => {
    const { id, source } = ctx.params as { id: string; source: string };
    const body = await readBody(ctx, RotateBody);
    ctx.body = viewSource(await sources.rotateSecret(id, source, body), id, publicUrl);
  });

  router.delete(`${base}/:source`, async (ctx) => {
    const { id, source } = ctx.params as { id: string; source: string };
    await sources.remove(id, source);
    ctx.body = { removed: source };
  });

  router.get(`${base}/:source/deliveries`, async (ctx) => {
    const { id, source } = ctx.params as { id: string; source: string };
    ctx.body = { deliveries: await sources.deliveries(id, source) };
  });
}
