import { ApiError } from '../core/errors';
import { buildIntegrationView } from '../operator/integration-view';
import type { CreateTrackerInput, UpdateTrackerInput } from '../operator/tracker-service';
import type { PrivacyRule } from '../core/trackers/privacy-rules';
import { activeTokens } from '../core/trackers/types';
import type { AdminDeps } from './deps';
import type { GuardedRoutes } from './guarded-routes';
import { readJsonObject } from './json-body';
import { principalOf } from './auth';
import { trackerRole } from '../core/access/roles';
import { removeTracker } from '../operator/remove-tracker';

/**
 * Trackers and their tokens. Bodies go to TrackerService as they are: it checks them with its own
 * strict schemas (unknown keys included), exactly as for the CLI, and its refusals name the field.
 */
export function registerTrackerRoutes(routes: GuardedRoutes, deps: AdminDeps): void {
  const { trackers } = deps;

  routes.get('/trackers', 'signed-in', async (ctx) => {
    // Each caller sees the trackers it has a role on.
    const rights = principalOf(ctx).rights;
    const stored = await trackers.listTrackers();
    const mine = ({ id }: { id: string }) => trackerRole(rights, id) !== undefined;
    ctx.body = { trackers: stored.trackers.filter(mine), unreadable: stored.unreadable.filter(mine) };
  });

  routes.post('/trackers', 'relay:admin', async (ctx) => {
    const { tracker, token } = await trackers.createTracker((await readJsonObject(ctx)) as CreateTrackerInput);
    ctx.status = 201;
    ctx.body = { tracker, token, integration: buildIntegrationView(tracker, token, deps.publicUrl) };
  });

  routes.get('/trackers/:id', 'tracker:view', async (ctx) => {
    ctx.body = await trackers.getTracker(ctx.params.id!);
  });

  // An admin's: it discards what Redis still holds for the tracker (docs/admin-api.md).
  routes.delete('/trackers/:id', 'relay:admin', async (ctx) => {
    ctx.body = await removeTracker(deps.delivery, deps.access.service, ctx.params.id!);
  });

  routes.patch('/trackers/:id', 'tracker:edit', async (ctx) => {
    ctx.body = await trackers.updateTracker(ctx.params.id!, (await readJsonObject(ctx)) as UpdateTrackerInput);
  });

  routes.post('/trackers/:id/tokens', 'tracker:edit', async (ctx) => {
    ctx.status = 201;
    ctx.body = await trackers.rotateToken(ctx.params.id!);
  });

  routes.delete('/trackers/:id/tokens/:token', 'tracker:edit', async (ctx) => {
    ctx.body = await trackers.revokeToken(ctx.params.id!, ctx.params.token!);
  });

  // One personal-data rule at a time (PATCH with privacyRules replaces the list): added, or its action changed.
  routes.post('/trackers/:id/privacy-rules', 'tracker:edit', async (ctx) => {
    ctx.body = await trackers.setPrivacyRule(ctx.params.id!, (await readJsonObject(ctx)) as PrivacyRule);
  });

  // The property goes in the query: a JSON pointer's slashes would be path segments.
  routes.delete('/trackers/:id/privacy-rules', 'tracker:edit', async (ctx) => {
    const property = ctx.query.property;
    if (typeof property !== 'string' || property === '') throw new ApiError('ERR_ADMIN_INVALID', 'Name the rule to remove: ?property=<name or JSON pointer>.', 'property');
    ctx.body = await trackers.removePrivacyRule(ctx.params.id!, property);
  });

  // The view of the oldest active token: the one clients most likely use.
  routes.get('/trackers/:id/integration', 'tracker:view', async (ctx) => {
    const tracker = await trackers.getTracker(ctx.params.id!);
    const token = activeTokens(tracker)[0];
    if (!token) throw new ApiError('ERR_ADMIN_CONFLICT', `Tracker ${tracker.id} has no active token; rotate one first.`);
    ctx.body = buildIntegrationView(tracker, token.token, deps.publicUrl);
  });
}
