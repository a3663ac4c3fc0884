import type { Context } from 'koa';

/**
 * Holds a console session's opaque id (never a token): HttpOnly (no script reads it),
 * SameSite=Strict, only under /admin. Named apart from the cookie that once held the admin token
 * itself, so such a cookie is never read as a session.
 */
export const SESSION_COOKIE = 'tributary_session';

export function setSessionCookie(ctx: Context, id: string | null, maxAgeMs = 0): void {
  ctx.cookies.set(SESSION_COOKIE, id, {
    httpOnly: true,
    sameSite: 'strict',
    path: '/admin',
    // Behind TLS (TRUST_PROXY with X-Forwarded-Proto, or direct) the cookie is never sent in clear.
    secure: ctx.secure,
    maxAge: id === null ? 0 : maxAgeMs,
    overwrite: true,
  });
}
