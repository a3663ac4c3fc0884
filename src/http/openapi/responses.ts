import { ref, type ResponseName } from './components';
import type { Reference } from './types';

/** The status each named error answer is sent with. */
export const STATUS_OF: Readonly<Record<ResponseName, number>> = {
  V3BadRequest: 400,
  V3Unauthorized: 401,
  V3Forbidden: 403,
  PayloadTooLarge: 413,
  UriTooLong: 414,
  UnsupportedMediaType: 415,
  RateLimited: 429,
  Unavailable: 503,
  WebhookUnauthorized: 401,
  WebhookNotFound: 404,
  HttpBadRequest: 400,
  RequestTimeout: 408,
  HeadersTooLarge: 431,
  NotFound: 404,
  MethodNotAllowed: 405,
  Internal: 500,
  AdminInvalid: 400,
  AdminUnauthorized: 401,
  AdminForbidden: 403,
  AdminSignInLimited: 429,
  AdminNotFound: 404,
  AdminConflict: 409,
  AdminBodyTooLarge: 413,
  AdminMediaType: 415,
  ConsoleNotBuilt: 503,
  SdkNotBuilt: 503,
  SegmentBadRequest: 400,
  SegmentUnauthorized: 401,
  SegmentForbidden: 403,
  SegmentPayloadTooLarge: 413,
  SegmentUnsupportedMediaType: 415,
  SegmentRateLimited: 429,
  SegmentUnavailable: 503,
  SegmentMethodNotAllowed: 405,
  SegmentInternal: 500,
};

/** `{ "<status>": {$ref} }` for the named error answers; two with one status cannot share an operation. */
export function errors(...names: ResponseName[]): Record<string, Reference> {
  const out: Record<string, Reference> = {};
  for (const name of names) {
    const status = String(STATUS_OF[name]);
    if (out[status]) throw new Error(`two error answers with status ${status}: ${name} and ${out[status].$ref}`);
    out[status] = ref(`responses/${name}`);
  }
  return out;
}

/**
 * What any route may answer besides its own: the HTTP server's refusals, another method on its
 * path, and the server's own faults. (`ERR_BAD_REQUEST`, a 400, is in each route's 400 answer.)
 */
export const SERVER_ERRORS: ResponseName[] = ['RequestTimeout', 'HeadersTooLarge', 'MethodNotAllowed', 'Internal'];
