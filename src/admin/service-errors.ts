import type { Middleware } from 'koa';
import { ApiError, type ErrorCode } from '../core/errors';
import { isOutOfMemoryError, OUT_OF_MEMORY_MESSAGE } from '../core/redis/out-of-memory';
import { AccessServiceError, type AccessServiceErrorCode } from '../operator/access-service';
import { DeliveryAdminError, type DeliveryAdminErrorCode } from '../operator/delivery-admin';
import { DestinationServiceError, type DestinationServiceErrorCode } from '../operator/destination-service';
import { SourceServiceError, type SourceServiceErrorCode } from '../operator/source-service';
import { TrackerServiceError, type TrackerServiceErrorCode } from '../operator/tracker-service';
import { isUnreadableTracker } from '../core/trackers/store';

// Exhaustive maps: a new service error code fails the type check until it is given a status here.
const TRACKER: Readonly<Record<TrackerServiceErrorCode, ErrorCode>> = {
  TRACKER_NOT_FOUND: 'ERR_ADMIN_NOT_FOUND',
  RULE_NOT_FOUND: 'ERR_ADMIN_NOT_FOUND',
  TOKEN_NOT_FOUND: 'ERR_ADMIN_NOT_FOUND',
  TOKEN_AMBIGUOUS: 'ERR_ADMIN_INVALID',
  INVALID_INPUT: 'ERR_ADMIN_INVALID',
  LAST_TOKEN: 'ERR_ADMIN_CONFLICT',
  ID_TAKEN: 'ERR_ADMIN_CONFLICT',
};

const DESTINATION: Readonly<Record<DestinationServiceErrorCode, ErrorCode>> = {
  TRACKER_NOT_FOUND: 'ERR_ADMIN_NOT_FOUND',
  DESTINATION_NOT_FOUND: 'ERR_ADMIN_NOT_FOUND',
  DESTINATION_EXISTS: 'ERR_ADMIN_CONFLICT',
  UNKNOWN_TYPE: 'ERR_ADMIN_INVALID',
  INVALID_SETTINGS: 'ERR_ADMIN_INVALID',
  INVALID_RULES: 'ERR_ADMIN_INVALID',
};

const SOURCE: Readonly<Record<SourceServiceErrorCode, ErrorCode>> = {
  TRACKER_NOT_FOUND: 'ERR_ADMIN_NOT_FOUND',
  SOURCE_NOT_FOUND: 'ERR_ADMIN_NOT_FOUND',
  SOURCE_EXISTS: 'ERR_ADMIN_CONFLICT',
  INVALID_INPUT: 'ERR_ADMIN_INVALID',
};

const DELIVERY: Readonly<Record<DeliveryAdminErrorCode, ErrorCode>> = {
  TRACKER_NOT_FOUND: 'ERR_ADMIN_NOT_FOUND',
  BACKFILL_REFUSED: 'ERR_ADMIN_CONFLICT',
  NO_LOCAL_DESTINATION: 'ERR_ADMIN_NOT_FOUND',
  SEVERAL_LOCAL_DESTINATIONS: 'ERR_ADMIN_CONFLICT',
  NOT_LOCAL: 'ERR_ADMIN_INVALID',
  INVALID_SETTINGS: 'ERR_ADMIN_CONFLICT',
  NO_WAREHOUSE_YET: 'ERR_ADMIN_NOT_FOUND',
  WAREHOUSE_BUSY: 'ERR_ADMIN_CONFLICT',
  WAREHOUSE_FAILED: 'ERR_ADMIN_INVALID',
};

const ACCESS: Readonly<Record<AccessServiceErrorCode, ErrorCode>> = {
  INVALID_INPUT: 'ERR_ADMIN_INVALID',
  PERSON_NOT_FOUND: 'ERR_ADMIN_NOT_FOUND',
  TOKEN_NOT_FOUND: 'ERR_ADMIN_NOT_FOUND',
  EMAIL_TAKEN: 'ERR_ADMIN_CONFLICT',
  INVITE_INVALID: 'ERR_ADMIN_NOT_FOUND',
  LAST_ADMIN: 'ERR_ADMIN_CONFLICT',
  BEYOND_OWN_RIGHTS: 'ERR_ADMIN_FORBIDDEN',
};

/** The service's refusal as an HTTP error; anything else is left to the error handler (a 500). */
export function toAdminApiError(err: unknown): unknown {
  if (err instanceof TrackerServiceError) return new ApiError(TRACKER[err.code], err.message, err.field);
  if (err instanceof DestinationServiceError) return new ApiError(DESTINATION[err.code], err.message, err.field);
  if (err instanceof SourceServiceError) return new ApiError(SOURCE[err.code], err.message, err.field);
  if (err instanceof DeliveryAdminError) return new ApiError(DELIVERY[err.code], err.message);
  if (err instanceof AccessServiceError) return new ApiError(ACCESS[err.code], err.message, err.field);
  if (isOutOfMemoryError(err)) return new ApiError('ERR_QUEUE_FULL', OUT_OF_MEMORY_MESSAGE);
  // The server's own state, not the request: a 500 that says which tracker and why, for its operator.
  if (isUnreadableTracker(err)) return new ApiError('ERR_INTERNAL', `${err.message}; see docs/operating.md, “Trackers that cannot be read”`);
  return err;
}

/** Service messages are written for operators (they name the id and the fix), so they are shown as they are. */
export const mapServiceErrors: Middleware = async (_ctx, next) => {
  try {
    await next();
  } catch (err) {
    throw toAdminApiError(err);
  }
};
