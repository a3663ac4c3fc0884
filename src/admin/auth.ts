import type { Middleware } from 'koa';
import { ApiError } from '../errors';
import { tokensEqual } from '../trackers/tokens';

const BEARER = /^Bearer +(\S+) *$/i;

/**
 * Only `Authorization: Bearer <admin token>` passes. Tracker tokens live in another namespace
 * (`Tracker …`, `_token`) and are never looked up here, so none of them can grant admin access.
 * The comparison runs over digests in constant time (see tokensEqual).
 */
export function createAdminAuth(adminToken: string): Middleware {
  return async (ctx, next) => {
    const presented = BEARER.exec(ctx.get('Authorization'))?.[1];
    if (presented === undefined || !tokensEqual(presented, adminToken)) {
      throw new ApiError('ERR_ADMIN_UNAUTHORIZED', undefined, undefined, { 'WWW-Authenticate': 'Bearer realm="tributary-admin"' });
    }
    await next();
  };
}
