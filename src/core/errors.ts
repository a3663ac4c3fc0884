/**
 * Every error code the HTTP edge can answer with, in one registry.
 * The error table of docs/sending-data.md is checked against this list by `test/core/errors-registry.test.ts`.
 */
export const ERROR_CODES = {
  ERR_MALFORMED_JSON: { status: 400, message: 'The body or data parameter is not valid JSON.' },
  ERR_MALFORMED_BASE64: { status: 400, message: 'The data parameter is not valid base64.' },
  ERR_MALFORMED_ENCODING: { status: 400, message: 'The body could not be decoded with its Content-Encoding.' },
  ERR_MALFORMED_BODY: { status: 400, message: 'The request body could not be read.' },
  ERR_INVALID_PAYLOAD: { status: 400, message: 'A record must be a JSON object (or an array of objects).' },
  ERR_EMPTY_BATCH: { status: 400, message: 'The array holds no records.' },
  ERR_NO_VALID_RECORDS: { status: 400, message: 'No record in the request was valid; see results.' },
  ERR_MISSING_FIELD: { status: 400, message: 'A required field is missing.' },
  ERR_INVALID_FIELD: { status: 400, message: 'A field has an invalid value.' },
  ERR_RESERVED_FIELD: { status: 400, message: 'Names starting with an underscore are reserved.' },
  ERR_TOO_MANY_PROPERTIES: { status: 400, message: 'The record has too many properties.' },
  ERR_KEY_TOO_LONG: { status: 400, message: 'A property name is too long.' },
  ERR_VALUE_TOO_LONG: { status: 400, message: 'A string value is too long.' },
  ERR_INVALID_UNICODE: { status: 400, message: 'Text holds a lone UTF-16 surrogate, which no destination can store.' },
  ERR_TOO_DEEP: { status: 400, message: 'A property value is nested too deeply.' },
  ERR_BAD_REQUEST: { status: 400, message: 'The request is not valid HTTP/1.1.' },
  ERR_ADMIN_INVALID: { status: 400, message: 'The admin request is invalid; `field` names the input to fix.' },
  ERR_MISSING_TOKEN: { status: 401, message: 'No tracker token: send Authorization: Tracker <token>, or _token in the body or query.' },
  ERR_INVALID_TOKEN: { status: 401, message: 'The tracker token is unknown or revoked.' },
  ERR_TOKEN_CONFLICT: { status: 401, message: 'The request carries different tokens in different places.' },
  ERR_WEBHOOK_SIGNATURE: { status: 401, message: 'The webhook delivery is not signed with the source’s secret (the message names the reason).' },
  ERR_ADMIN_UNAUTHORIZED: { status: 401, message: "The admin API needs a credential: Authorization: Bearer <token> (a personal or service token, or the break-glass admin token), or the console's session cookie." },
  ERR_ORIGIN_NOT_ALLOWED: { status: 403, message: "The request's Origin is not allowed by this tracker." },
  ERR_ADMIN_FORBIDDEN: { status: 403, message: 'Signed in, but your role or your token\'s scopes do not allow this (the message says which).' },
  ERR_ADMIN_CROSS_ORIGIN: { status: 403, message: "A change sent with the console's session cookie came from another origin." },
  ERR_NOT_FOUND: { status: 404, message: 'No such endpoint.' },
  ERR_WEBHOOK_NOT_FOUND: { status: 404, message: 'No such webhook source: check the URL the sender posts to.' },
  ERR_ADMIN_NOT_FOUND: { status: 404, message: 'No such tracker, token, destination, webhook source or personal-data rule.' },
  ERR_METHOD_NOT_ALLOWED: { status: 405, message: 'This endpoint does not accept that method.' },
  ERR_ADMIN_CONFLICT: { status: 409, message: 'The change conflicts with the current state (an id taken, the last active token).' },
  ERR_REQUEST_TIMEOUT: { status: 408, message: 'The request did not arrive in time.' },
  ERR_PAYLOAD_TOO_LARGE: { status: 413, message: 'The request body is too large.' },
  ERR_TOO_MANY_RECORDS: { status: 413, message: 'The request holds too many records.' },
  ERR_URI_TOO_LONG: { status: 414, message: 'The URL is longer than LIMIT_HEADER_BYTES allows: send large data= payloads by POST.' },
  ERR_UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'Send application/json, text/plain (holding JSON) or application/x-www-form-urlencoded.' },
  ERR_UNSUPPORTED_ENCODING: { status: 415, message: 'Supported Content-Encodings are gzip, deflate, br and identity.' },
  ERR_HEADERS_TOO_LARGE: { status: 431, message: 'The request line and headers are larger than LIMIT_HEADER_BYTES.' },
  ERR_ADMIN_SIGN_IN_LIMITED: { status: 429, message: 'Too many failed sign-ins for this e-mail or from this address; retry after the number of seconds in Retry-After.' },
  ERR_RATE_LIMITED: { status: 429, message: "The tracker's rate limit is exceeded; retry after the number of seconds in Retry-After." },
  ERR_QUEUE_UNAVAILABLE: { status: 503, message: 'The queue is unreachable; nothing was stored. Retry after the number of seconds in Retry-After.' },
  ERR_QUEUE_FULL: { status: 503, message: "Redis memory is at the relay's high watermark; nothing was stored. Retry after the number of seconds in Retry-After." },
  ERR_SHUTTING_DOWN: { status: 503, message: 'The server is shutting down; nothing was stored. Retry shortly.' },
  ERR_CONSOLE_NOT_BUILT: { status: 503, message: 'The console is not built: run npm run build (npm ci does it).' },
  ERR_SDK_NOT_BUILT: { status: 503, message: 'The browser SDK is not built: run npm run build (npm ci does it).' },
  ERR_INTERNAL: { status: 500, message: 'Internal error.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The JSON shape of every error answer: `{"error": ErrorBody}`. */
export interface ErrorBody {
  code: ErrorCode;
  message: string;
  field?: string;
}

/** An error that the HTTP edge answers as-is: its status, code and message are safe to show. */
export class ApiError extends Error {
  readonly status: number;
  readonly expose = true;
  constructor(
    readonly code: ErrorCode,
    readonly detail?: string,
    readonly field?: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(detail ?? ERROR_CODES[code].message);
    this.name = 'ApiError';
    this.status = ERROR_CODES[code].status;
  }

  toBody(): ErrorBody {
    return { code: this.code, message: this.message, ...(this.field !== undefined ? { field: this.field } : {}) };
  }
}

/** A per-record validation failure: reported in the response, never thrown past the record. */
export interface RecordError {
  code: ErrorCode;
  message: string;
  field?: string;
}

export function recordError(code: ErrorCode, field?: string, detail?: string): RecordError {
  return { code, message: detail ?? ERROR_CODES[code].message, ...(field !== undefined ? { field } : {}) };
}
