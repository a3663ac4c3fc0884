import type { Context, Middleware } from 'koa';
import { ApiError } from '../core/errors';
import { tokensEqual } from '../core/trackers/tokens';
import { SESSION_COOKIE } from './session';

const BEARER = /^Bearer +(\S+) *$/i;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Routes that work without the token: logging in, and logging out. */
const OPEN_ROUTES = new Set(['POST /admin/api/session', 'DELETE /admin/api/session']);

function unauthorized(): ApiError {
  return new ApiError('ERR_ADMIN_UNAUTHORIZED', undefined, undefined, { 'WWW-Authenticate': 'Bearer realm="tributary-admin"' });
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
 * The admin token as `Authorization: Bearer <token>` (API clients), or the console's session
 * cookie holding it (browsers: EventSource cannot send headers). Tracker tokens live in another
 * namespace (`Tracker …`, `_token`) and are never looked up here, so none of them can grant admin
 * access. The comparison runs over digests in constant time (see tokensEqual).
 */
export function createAdminAuth(adminToken: string): Middleware {
  return async (ctx, next) => {
    if (OPEN_ROUTES.has(`${ctx.method} ${ctx.path.replace(/\/+$/, '')}`)) return next();
    const bearer = BEARER.exec(ctx.get('Authorization'))?.[1];
    const presented = bearer ?? ctx.cookies.get(SESSION_COOKIE);
    if (presented === undefined || !tokensEqual(presented, adminToken)) throw unauthorized();
    if (bearer === undefined && !SAFE_METHODS.has(ctx.method) && !fromOwnOrigin(ctx)) {
      throw new ApiError('ERR_ADMIN_CROSS_ORIGIN', `A change sent with the console's cookie must come from ${ownOrigin(ctx)}, not ${ctx.get('origin') || 'another site'}.`);
    }
    await next();
  };
}
