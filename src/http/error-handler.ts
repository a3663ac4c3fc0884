import type { Middleware } from 'koa';
import type { HttpContext, RequestState } from '../core/requests/request-state';
import { ApiError, ERROR_CODES, type ErrorBody } from '../core/errors';
import type { Logger } from '../core/logger';
import type { Metrics } from '../core/metrics';
import { isOutOfMemoryError } from '../core/redis/out-of-memory';
import { sendFixed, type FixedResponse } from '../ingest/fixed-responses';
import { isSegmentPath, segmentErrorBody } from '../ingest/segment/segment-answers';

/** Header naming the error code on answers whose body is fixed (pixel, script). */
export const ERROR_HEADER = 'X-Tributary-Error';

/** A pixel path keeps its fixed body even when no route ran (405 on POST, say). */
const FIXED_PATH = /^\/v3\/(?:user|session|event)\/tracker\.(gif|js)\/?$/;

function fixedKind(ctx: HttpContext): FixedResponse | undefined {
  const fixed = ctx.state.fixed;
  if (fixed) return fixed;
  const m = FIXED_PATH.exec(ctx.path);
  return m ? (m[1] as FixedResponse) : undefined;
}

function toApiError(err: unknown, logger: Logger, retryAfterSeconds: number): ApiError {
  if (err instanceof ApiError) return err;
  // Redis's refusal names its scripts and their lines: never shown, whichever route met it.
  if (isOutOfMemoryError(err)) return new ApiError('ERR_QUEUE_FULL', 'Redis is at its memory limit; nothing was changed. Retry after the number of seconds in Retry-After.', undefined, { 'Retry-After': String(retryAfterSeconds) });
  logger.error({ err }, 'unhandled error');
  return new ApiError('ERR_INTERNAL');
}

/**
 * First in the chain: renders every error as `{"error":{code,message,field}}` (on Segment's `/v1`
 * paths with `code` and `message` at the top too; on a pixel path, the fixed body of a pixel with
 * the code in a header), turns unmatched routes into JSON 404/405, and
 * counts requests by matched route and status.
 */
export function createErrorHandler(logger: Logger, metrics: Metrics, retryAfterSeconds = 5): Middleware<RequestState> {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.body === undefined || ctx.body === null) {
        if (ctx.status === 404) throw new ApiError('ERR_NOT_FOUND', `No endpoint at ${ctx.path}.`);
        // The router answers 501 for methods it has no table for (PROPFIND…); to a client that is a 405 too.
        if (ctx.status === 405 || ctx.status === 501) throw new ApiError('ERR_METHOD_NOT_ALLOWED', `${ctx.method} is not allowed on ${ctx.path}; allowed: ${ctx.response.get('Allow')}.`);
      }
    } catch (err) {
      const error = toApiError(err, logger, retryAfterSeconds);
      // The pixel's answer carries only the code; the request history keeps the message too.
      ctx.state.errorMessage = error.message;
      for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value);
      const fixed = fixedKind(ctx);
      if (fixed) {
        ctx.set(ERROR_HEADER, error.code);
        sendFixed(ctx, fixed, error.status);
      } else {
        ctx.status = error.status;
        ctx.body = isSegmentPath(ctx.path) ? segmentErrorBody(error.toBody()) : ({ error: error.toBody() } satisfies { error: ErrorBody });
      }
      // A refused origin must not read the answer; every other error stays readable by the browser client.
      if (error.status === 403) ctx.remove('Access-Control-Allow-Origin');
      if (error.status >= 500 && error.code !== 'ERR_INTERNAL') logger.warn({ code: error.code, message: error.message, ...(error.cause instanceof Error ? { cause: error.cause.message } : {}) }, 'request refused');
    } finally {
      const endpoint = (ctx as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      metrics.requests.inc({ endpoint: String(endpoint), method: ctx.method, status: String(ctx.status) });
    }
  };
}

/** The statuses the registry can answer with, for documentation and tests. */
export const KNOWN_STATUSES = new Set(Object.values(ERROR_CODES).map((c) => c.status));
