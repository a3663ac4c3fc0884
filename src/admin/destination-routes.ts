import * as z from 'zod';
import { isDeadLetterEntryId } from '../../jobs/delivery/dead-letters';
import { restoreRedacted } from '../core/redact';
import type { AdminDeps } from './deps';
import type { GuardedRoutes } from './guarded-routes';
import { parseInput, readBody } from './json-body';
import { MAX_PREVIEW_RECORDS } from '../operator/rules-preview';
import { BACKFILL_RESOURCES } from '../../jobs/history/backfill';
import { ApiError } from '../core/errors';

const Settings = z.record(z.string(), z.unknown());

const AddBody = z.strictObject({
  type: z.string().min(1),
  id: z.string().optional(),
  settings: Settings.optional(),
  enabled: z.boolean().optional(),
  /** Checked whole by the service (src/core/rules/schema.ts), so that a refusal names the rule. */
  rules: z.unknown().optional(),
});

/**
 * `settings` replaces the stored settings as a whole; a secret sent back as `[redacted]` keeps its
 * stored value. `rules` replaces the rules as a whole; `null` removes them.
 */
const UpdateBody = z.strictObject({ settings: Settings.optional(), enabled: z.boolean().optional(), rules: z.unknown().optional() });

const TestSettingsBody = z.strictObject({ type: z.string().min(1), id: z.string().optional(), settings: Settings.optional() });

const PreviewBody = z.strictObject({
  /** Whose saved rules to use when `rules` is not given. */
  destination: z.string().optional(),
  /** Rules to try before saving them; checked as saving checks them. */
  rules: z.unknown().optional(),
  limit: z.number().int().min(1).max(MAX_PREVIEW_RECORDS).optional(),
});

const BackfillBody = z.strictObject({
  /** ISO 8601; default: as far back as the tracker's archive keeps. */
  since: z.iso.datetime({ offset: true }).optional(),
  /** ISO 8601; default: now. */
  until: z.iso.datetime({ offset: true }).optional(),
  resources: z.array(z.enum(BACKFILL_RESOURCES)).min(1).optional(),
});

const EntryIds = z.strictObject({
  /** Omitted: every dead letter there is now. */
  ids: z.array(z.string().refine(isDeadLetterEntryId, 'an entry id looks like 1718000000000-0')).max(5000).optional(),
});

export const DeadLetterQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  after: z.string().refine(isDeadLetterEntryId, 'an entry id looks like 1718000000000-0').optional(),
});

/** A destination's connector test can take a while (creating tables); the console shows a spinner meanwhile. */
const TEST_TIMEOUT_MS = 30_000;

export function registerDestinationRoutes(routes: GuardedRoutes, deps: AdminDeps): void {
  const { destinations, delivery } = deps;
  const base = '/trackers/:id/destinations';

  routes.get(base, 'tracker:view', async (ctx) => {
    const [list, backlog, archive] = await Promise.all([delivery.listWithStatus(ctx.params.id!), delivery.backlog(ctx.params.id!), delivery.archive(ctx.params.id!)]);
    ctx.body = { destinations: list, backlog, archive };
  });

  routes.post(base, 'tracker:edit', async (ctx) => {
    const body = await readBody(ctx, AddBody);
    ctx.status = 201;
    ctx.body = await destinations.add(ctx.params.id!, body);
  });

  routes.patch(`${base}/:dest`, 'tracker:edit', async (ctx) => {
    const { id, dest } = ctx.params as { id: string; dest: string };
    const body = await readBody(ctx, UpdateBody);
    const settings = body.settings && restoreRedacted(body.settings, (await destinations.get(id, dest)).settings);
    ctx.body = await destinations.update(id, dest, { settings, enabled: body.enabled, rules: body.rules });
  });

  routes.delete(`${base}/:dest`, 'tracker:edit', async (ctx) => {
    ctx.body = { removed: ctx.params.dest!, discarded: await delivery.removeDestination(ctx.params.id!, ctx.params.dest!) };
  });

  // A failing destination is a result to show, not an error of this request: always 200, `ok` says which.
  // Before saving (the console's Test): nothing is stored; a saved destination's secrets fill in `[redacted]`.
  routes.post(`${base}/test-settings`, 'tracker:edit', async (ctx) => {
    const { id, type, settings = {} } = await readBody(ctx, TestSettingsBody);
    const saved = id ? (await destinations.list(ctx.params.id!)).find((d) => d.id === id) : undefined;
    const filled = saved ? restoreRedacted(settings, saved.settings) : settings;
    ctx.body = await destinations.testSettings(ctx.params.id!, { type, id, settings: filled }, TEST_TIMEOUT_MS);
  });

  routes.post(`${base}/:dest/test`, 'tracker:edit', async (ctx) => {
    ctx.body = await destinations.test(ctx.params.id!, ctx.params.dest!, TEST_TIMEOUT_MS);
  });

  routes.get(`${base}/:dest/dead-letters`, 'tracker:payloads', async (ctx) => {
    const query = parseInput(DeadLetterQuery, ctx.query, 'query');
    const { store } = await delivery.deadLetters(ctx.params.id!, ctx.params.dest!);
    const [entries, total] = await Promise.all([store.list(query.limit, query.after), store.count()]);
    ctx.body = { total, entries };
  });

  // History: the archived records of a range, sent again through the destination's rules (jobs/history/backfill.ts).
  routes.post(`${base}/:dest/backfill`, 'tracker:edit', async (ctx) => {
    const { id, dest } = ctx.params as { id: string; dest: string };
    const body = await readBody(ctx, BackfillBody);
    const tracker = await deps.trackers.getTracker(id);
    const until = body.until ? new Date(body.until) : new Date();
    const since = body.since ? new Date(body.since) : new Date(until.getTime() - tracker.archiveDays * 86_400_000);
    ctx.status = 202;
    ctx.body = await delivery.startBackfill(id, dest, { since, until, resources: body.resources });
  });

  routes.get(`${base}/:dest/backfill`, 'tracker:view', async (ctx) => {
    const view = await delivery.backfill(ctx.params.id!, ctx.params.dest!);
    if (!view) throw new ApiError('ERR_ADMIN_NOT_FOUND', `Destination ${ctx.params.dest} of tracker ${ctx.params.id} has had no backfill.`);
    ctx.body = view;
  });

  routes.delete(`${base}/:dest/backfill`, 'tracker:edit', async (ctx) => {
    ctx.body = { cancelled: await delivery.cancelBackfill(ctx.params.id!, ctx.params.dest!) };
  });

  // What a destination's rules (saved, or given to try) make of the tracker's last records.
  routes.post('/trackers/:id/rules/preview', 'tracker:payloads', async (ctx) => {
    const body = await readBody(ctx, PreviewBody);
    // Records hold big integers as bigints: the admin router writes every answer as exact JSON.
    ctx.body = await deps.preview.preview({ trackerId: ctx.params.id!, destinationId: body.destination, rules: body.rules, limit: body.limit });
  });

  routes.post(`${base}/:dest/dead-letters/replay`, 'tracker:edit', async (ctx) => {
    const { ids } = await readBody(ctx, EntryIds);
    const { destination, store } = await delivery.deadLetters(ctx.params.id!, ctx.params.dest!);
    // Replayed records wait in the stream while the destination is disabled; the console says so.
    ctx.body = { replayed: await store.replay(ids), destinationEnabled: destination.enabled };
  });

  routes.post(`${base}/:dest/dead-letters/discard`, 'tracker:edit', async (ctx) => {
    const { ids } = await readBody(ctx, EntryIds);
    const { store } = await delivery.deadLetters(ctx.params.id!, ctx.params.dest!);
    ctx.body = { discarded: await store.discard(ids) };
  });
}
