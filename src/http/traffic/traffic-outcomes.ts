import type { HttpContext } from '../../core/requests/request-state';
import { ERROR_CODES } from '../../core/errors';
import { ERROR_HEADER } from '../error-handler';

/** The code a request was refused with as a whole: the JSON error's, or the pixel's header. */
function requestCode(ctx: HttpContext): string | undefined {
  const body = (Buffer.isBuffer(ctx.body) ? undefined : ctx.body) as { error?: { code?: unknown } } | null | undefined;
  const code = body && typeof body === 'object' && body.error ? body.error.code : ctx.response.get(ERROR_HEADER) || undefined;
  return typeof code === 'string' ? code : undefined;
}

/**
 * What became of a finished v3 request's records, as `[outcome, records]` pairs: `accepted`
 * (stored), `duplicate` (a key accepted before), and each refusal's `ERR_*` code. A record refused
 * on its own counts under its own code (the ingest route lists them in `ctx.state.refusedCodes`);
 * a request refused as a whole counts the records it held under the request's code — or one, when
 * it was refused before its records could be read (malformed, too large, a webhook's signature).
 */
export function trafficOutcomes(ctx: HttpContext): Array<[string, number]> {
  const out: Array<[string, number]> = [];
  const accepted = ctx.state.liveRecords?.length ?? 0;
  const duplicates = ctx.state.liveDuplicates ?? 0;
  const refused = ctx.state.refusedCodes;
  if (accepted > 0) out.push(['accepted', accepted]);
  if (duplicates > 0) out.push(['duplicate', duplicates]);
  if (refused) for (const code of refused) out.push([Object.hasOwn(ERROR_CODES, code) ? code : 'refused', 1]);
  if (ctx.status >= 400) {
    const code = requestCode(ctx);
    const records = ctx.state.recordCount;
    const rest = records === undefined ? 1 : records - accepted - duplicates - (refused?.length ?? 0);
    if (rest > 0) out.push([code !== undefined && Object.hasOwn(ERROR_CODES, code) ? code : 'refused', rest]);
  }
  return out;
}
