import type { HttpContext } from '../core/requests/request-state';
import { isSegmentPath } from '../ingest/segment/segment-answers';
import { basicWriteKey } from '../ingest/segment/write-key';

const TOKEN_IN_HEADER = /^Tracker +(\S+) *$/i;

/**
 * The tracker token a finished v3 request carried: the one the ingest route read (header, body or
 * URL), else, for a request refused before its body was read (malformed, too large), the header's
 * or the URL's; on Segment's `/v1` paths, the write key of Basic credentials. Used to file such a
 * refusal under its tracker.
 */
export function requestToken(ctx: HttpContext): string | undefined {
  const presented = ctx.state.presentedToken;
  const authorization = ctx.get('authorization');
  return presented ?? TOKEN_IN_HEADER.exec(authorization)?.[1] ?? (isSegmentPath(ctx.path) ? basicKey(authorization) : undefined) ?? new URLSearchParams(ctx.querystring).get('_token') ?? undefined;
}

function basicKey(authorization: string): string | undefined {
  try {
    return basicWriteKey(authorization);
  } catch {
    return undefined;
  }
}
