import type { Context } from 'koa';

const TOKEN_IN_HEADER = /^Tracker +(\S+) *$/i;

/**
 * The tracker token a finished v3 request carried: the one the ingest route read (header, body or
 * URL), else, for a request refused before its body was read (malformed, too large), the header's
 * or the URL's. Used to file such a refusal under its tracker.
 */
export function requestToken(ctx: Context): string | undefined {
  const presented = ctx.state.presentedToken as string | undefined;
  return presented ?? TOKEN_IN_HEADER.exec(ctx.get('authorization'))?.[1] ?? new URLSearchParams(ctx.querystring).get('_token') ?? undefined;
}
