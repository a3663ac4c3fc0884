import type { HttpContext } from '../core/requests/request-state';

const TOKEN_IN_HEADER = /^Tracker +(\S+) *$/i;

/**
 * The tracker token a finished v3 request carried: the one the ingest route read (header, body or
 * URL), else, for a request refused before its body was read (malformed, too large), the header's
 * or the URL's. Used to file such a refusal under its tracker.
 */
export function requestToken(ctx: HttpContext): string | undefined {
  const presented = ctx.state.presentedToken;
  return presented ?? TOKEN_IN_HEADER.exec(ctx.get('authorization'))?.[1] ?? new URLSearchParams(ctx.querystring).get('_token') ?? undefined;
}
