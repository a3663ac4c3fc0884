import { accessOf, forbidden, principalOf } from './auth';
import type { AdminDeps } from './deps';
import type { GuardedRoutes } from './guarded-routes';
import { readJsonObject } from './json-body';
import * as z from 'zod';
import { readBody } from './json-body';
import { ApiError } from '../core/errors';

const BreakGlassBody = z.strictObject({ enabled: z.boolean() });

/** People (admins only), tokens (one's own; an admin's: everyone's, and service tokens) and the break-glass switch. */
export function registerPeopleRoutes(routes: GuardedRoutes, deps: AdminDeps): void {
  const { service: access } = deps.access;

  routes.get('/people', 'relay:admin', async (ctx) => {
    ctx.body = { people: await access.listPeople() };
  });

  // Answers an invitation to pass on (a link to set a password), unless a password was given.
  routes.post('/people', 'relay:admin', async (ctx) => {
    ctx.status = 201;
    ctx.body = await access.addPerson(await readJsonObject(ctx), accessOf(ctx).actor);
  });

  routes.patch('/people/:person', 'relay:admin', async (ctx) => {
    ctx.body = await access.updatePerson(ctx.params.person!, await readJsonObject(ctx));
  });

  routes.delete('/people/:person', 'relay:admin', async (ctx) => {
    ctx.body = { removed: await access.removePerson(ctx.params.person!) };
  });

  routes.post('/people/:person/reset-password', 'relay:admin', async (ctx) => {
    ctx.body = { invitation: await access.resetPassword(ctx.params.person!) };
  });

  routes.get('/tokens', 'person', async (ctx) => {
    const p = principalOf(ctx);
    ctx.body = { tokens: await access.listTokens(p.rights.admin ? {} : { ownerId: p.person?.id ?? '' }) };
  });

  // The token is in this answer only.
  routes.post('/tokens', 'person', async (ctx) => {
    const p = principalOf(ctx);
    if (!p.person) throw new ApiError('ERR_ADMIN_INVALID', 'The break-glass admin token owns no personal tokens: make a service token (POST /admin/api/service-tokens).');
    ctx.status = 201;
    ctx.body = await access.createPersonalToken(p.person, await readJsonObject(ctx), p.actor);
  });

  routes.post('/service-tokens', 'relay:admin', async (ctx) => {
    ctx.status = 201;
    ctx.body = await access.createServiceToken(await readJsonObject(ctx), accessOf(ctx).actor);
  });

  // One's own token, or any token for an admin; a token may revoke itself (a leaked one, found by a script).
  routes.delete('/tokens/:token', 'signed-in', async (ctx) => {
    const p = principalOf(ctx);
    const token = await access.getToken(ctx.params.token!);
    const own = (p.person !== undefined && token.ownerId === p.person.id) || p.token?.id === token.id;
    if (!own && !p.rights.admin) throw forbidden('Only its owner or an admin may revoke this token.');
    ctx.body = { revoked: await access.revokeToken(token.id) };
  });

  routes.get('/access/break-glass', 'relay:admin', async (ctx) => {
    ctx.body = { enabled: await access.breakGlass.enabled() };
  });

  routes.put('/access/break-glass', 'relay:admin', async (ctx) => {
    const { enabled } = await readBody(ctx, BreakGlassBody);
    if (!enabled && (await access.people.list()).every((p) => p.role !== 'admin' || !p.passwordHash)) throw new ApiError('ERR_ADMIN_CONFLICT', 'No admin can sign in with a password yet: switching the admin token off would lock everyone out.');
    await access.breakGlass.set(enabled);
    ctx.body = { enabled };
  });
}
