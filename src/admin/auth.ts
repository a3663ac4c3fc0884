import type { Context, Middleware } from 'koa';
import type { Actor } from '../core/access/audit-context';
import type { Authenticator, Principal } from '../core/access/authenticate';
import { check, type Permission } from '../core/access/roles';
import { ApiError } from '../core/errors';
import { SESSION_COOKIE } from './session-cookie';

const BEARER = /^Bearer +(\S+) *$/i;
export const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** What the admin router knows of a request's caller, in `ctx.state.access`. */
export interface AccessState {
  actor: Actor;
  principal?: Principal;
  /** The credential checked again as it is now (for a stream that outlives its request). */
  reauthenticate?: () => Promise<Principal | undefined>;
}

export function accessOf(ctx: Context): AccessState {
  return (ctx.state as { access: AccessState }).access;
}

/** The principal of a route that is not `open` (the guard ran). */
export function principalOf(ctx: Context): Principal {
  const principal = accessOf(ctx).principal;
  if (!principal) throw new Error('principalOf: the route is open, or its guard did not run');
  return principal;
}

export function anonymous(ctx: Context): Actor {
  return { kind: 'anonymous', label: `anonymous ${ctx.ip}` };
}

function unauthorized(message?: string): ApiError {
  return new ApiError('ERR_ADMIN_UNAUTHORIZED', message, undefined, { 'WWW-Authenticate': 'Bearer realm="tributary-admin"' });
}

export function forbidden(message: string): ApiError {
  return new ApiError('ERR_ADMIN_FORBIDDEN', message);
}

/**
 * A cookie rides along on requests that other pages trigger; a bearer header never does. So a
 * change made with the console's cookie must come from the console's own origin. Browsers send
 * `Origin` on every fetch that is not a GET, and `Sec-Fetch-Site` on every request.
 */
function ownOrigin(ctx: Context): string {
  // Not ctx.origin: Koa 3 answers the request's Origin header there.
  return `${ctx.protocol}://${ctx.host}`;
}

function fromOwnOrigin(ctx: Context): boolean {
  const origin = ctx.get('origin');
  if (origin) return origin === ownOrigin(ctx);
  const site = ctx.get('sec-fetch-site');
  return site === '' || site === 'same-origin' || site === 'none';
}

/**
 * Who is asking: `Authorization: Bearer <token>` (a personal or service token, or the break-glass
 * admin token) for scripts, or the console's session cookie (an opaque id, never a token) for
 * browsers, whose EventSource cannot send headers. Tracker tokens live in another namespace
 * (`Tracker …`, `_token`) and are never looked up here.
 */
export async function authenticate(ctx: Context, authenticator: Authenticator, state: AccessState): Promise<void> {
  const bearer = BEARER.exec(ctx.get('Authorization'))?.[1];
  const cookie = bearer === undefined ? ctx.cookies.get(SESSION_COOKIE) : undefined;
  if (bearer === undefined && cookie === undefined) throw unauthorized();
  const result = bearer !== undefined ? await authenticator.bearer(bearer) : await authenticator.session(cookie!);
  if (!result.ok) {
    if (result.actor) state.actor = result.actor;
    throw unauthorized(result.message);
  }
  state.principal = result.principal;
  state.actor = result.principal.actor;
  state.reauthenticate = async () => {
    const again = bearer !== undefined ? await authenticator.bearer(bearer) : await authenticator.session(cookie!);
    return again.ok ? again.principal : undefined;
  };
  if (bearer === undefined && !SAFE_METHODS.has(ctx.method) && !fromOwnOrigin(ctx)) {
    throw new ApiError('ERR_ADMIN_CROSS_ORIGIN', `A change sent with the console's cookie must come from ${ownOrigin(ctx)}, not ${ctx.get('origin') || 'another site'}.`);
  }
}

/** Whether the request's credential, checked again now, still allows `permission` on its tracker. */
export async function stillAllowed(ctx: Context, permission: Permission): Promise<boolean> {
  const principal = await accessOf(ctx).reauthenticate?.();
  if (!principal) return false;
  const trackerId = (ctx.params as Record<string, string | undefined> | undefined)?.id;
  return check(principal.rights, permission, trackerId).ok;
}

/** The guard in front of each declared route: the principal's rights against the route's permission, on the tracker its `:id` names. */
export function guard(permission: Permission): Middleware {
  return async (ctx, next) => {
    if (permission === 'open') return next();
    const principal = principalOf(ctx);
    if (permission === 'person' && principal.via === 'token') throw forbidden('A token cannot do this: sign in to the console as a person.');
    const trackerId = (ctx.params as Record<string, string | undefined> | undefined)?.id;
    const verdict = check(principal.rights, permission, trackerId);
    if (!verdict.ok) throw forbidden(verdict.reason === 'scope' ? `This token lacks the ${verdict.scope} scope.` : verdict.message);
    await next();
  };
}
