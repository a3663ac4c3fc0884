import type Router from '@koa/router';
import type { Context } from 'koa';
import * as z from 'zod';
import { ApiError } from '../core/errors';
import { tokensEqual } from '../core/trackers/tokens';
import { readBody } from './json-body';

/** Holds the admin token for the browser. HttpOnly (no script reads it), SameSite=Strict, only under /admin. */
export const SESSION_COOKIE = 'tributary_admin';

/** A console login lasts a working day; the token itself never expires. */
const SESSION_MS = 12 * 60 * 60 * 1000;

const LoginBody = z.strictObject({ token: z.string().min(1).max(512) });

function setCookie(ctx: Context, value: string | null): void {
  ctx.cookies.set(SESSION_COOKIE, value, {
    httpOnly: true,
    sameSite: 'strict',
    path: '/admin',
    // Behind TLS (TRUST_PROXY with X-Forwarded-Proto, or direct) the cookie is never sent in clear.
    secure: ctx.secure,
    maxAge: value === null ? 0 : SESSION_MS,
    overwrite: true,
  });
}

/** Logging in and out of the console. `GET` answers whether the caller is logged in (auth ran before it). */
export function registerSessionRoutes(router: Router, adminToken: string): void {
  router.post('/session', async (ctx) => {
    const { token } = await readBody(ctx, LoginBody);
    if (!tokensEqual(token, adminToken)) throw new ApiError('ERR_ADMIN_UNAUTHORIZED', 'That is not the admin token (see DATA_DIR/admin-token or ADMIN_TOKEN).', 'token');
    setCookie(ctx, token);
    ctx.status = 204;
  });

  router.get('/session', (ctx) => {
    ctx.body = { ok: true };
  });

  router.delete('/session', (ctx) => {
    setCookie(ctx, null);
    ctx.status = 204;
  });
}
