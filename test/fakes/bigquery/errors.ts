/**
 * Google's JSON error envelope, as BigQuery v2 answers it:
 * `{"error":{"code":403,"message":…,"errors":[{"message":…,"domain":"global","reason":"rateLimitExceeded"}],"status":"PERMISSION_DENIED"}}`
 * (https://cloud.google.com/bigquery/docs/error-messages). The client library turns it into an
 * `ApiError` whose `code` is the HTTP status and whose `errors[0].reason` carries the reason.
 */
const STATUS_NAMES: Readonly<Record<number, string>> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ALREADY_EXISTS',
  412: 'FAILED_PRECONDITION',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  501: 'NOT_IMPLEMENTED',
  503: 'UNAVAILABLE',
};

/** An error the fake answers with; thrown anywhere inside a handler. */
export class FakeApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    readonly location?: string,
  ) {
    super(message);
  }
}

export interface GoogleErrorBody {
  error: {
    code: number;
    message: string;
    errors: Array<{ message: string; domain: string; reason: string; location?: string; locationType?: string }>;
    status: string;
  };
}

export function errorBody(err: FakeApiError): GoogleErrorBody {
  const detail = { message: err.message, domain: 'global', reason: err.reason, ...(err.location ? { location: err.location, locationType: 'parameter' } : {}) };
  return { error: { code: err.status, message: err.message, errors: [detail], status: STATUS_NAMES[err.status] ?? 'UNKNOWN' } };
}

export const notFound = (what: string): FakeApiError => new FakeApiError(404, 'notFound', `Not found: ${what}`);
export const invalid = (message: string): FakeApiError => new FakeApiError(400, 'invalid', message);
export const invalidQuery = (message: string): FakeApiError => new FakeApiError(400, 'invalidQuery', message, 'q');
