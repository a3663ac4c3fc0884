import type { OpenApiDocument, Reference, Response } from './types';

export const ref = (to: string): Reference => ({ $ref: `#/components/${to}` });

const errorJson = { 'application/json': { schema: ref('schemas/ErrorAnswer') } };

function errorResponse(description: string, codes: readonly string[], extra: Partial<Response> = {}): Response {
  return { description: `${description} \`error.code\` is one of: ${codes.map((c) => `\`${c}\``).join(', ')}.`, content: errorJson, 'x-error-codes': codes, ...extra };
}

const retryAfter = { 'Retry-After': { description: 'Seconds to wait before sending again.', schema: { type: 'integer', minimum: 1 } } };

/**
 * Error answers, by who answers them and with which status. Every code of src/core/errors.ts is
 * listed by at least one, under its own status; test/http/openapi.test.ts holds them to that.
 */
export const RESPONSES = {
  V3BadRequest: errorResponse('The request or a record is not valid; nothing was stored.', [
    'ERR_MALFORMED_JSON',
    'ERR_MALFORMED_BASE64',
    'ERR_MALFORMED_ENCODING',
    'ERR_MALFORMED_BODY',
    'ERR_INVALID_PAYLOAD',
    'ERR_EMPTY_BATCH',
    'ERR_NO_VALID_RECORDS',
    'ERR_MISSING_FIELD',
    'ERR_INVALID_FIELD',
    'ERR_RESERVED_FIELD',
    'ERR_TOO_MANY_PROPERTIES',
    'ERR_KEY_TOO_LONG',
    'ERR_VALUE_TOO_LONG',
    'ERR_INVALID_UNICODE',
    'ERR_TOO_DEEP',
    'ERR_BAD_REQUEST',
  ]),
  V3Unauthorized: errorResponse('No token, an unknown or revoked one, or two different ones.', ['ERR_MISSING_TOKEN', 'ERR_INVALID_TOKEN', 'ERR_TOKEN_CONFLICT']),
  V3Forbidden: errorResponse("The request's Origin is not in the tracker's CORS origins.", ['ERR_ORIGIN_NOT_ALLOWED']),
  PayloadTooLarge: errorResponse('The body, once decoded, or the number of records is over its limit.', ['ERR_PAYLOAD_TOO_LARGE', 'ERR_TOO_MANY_RECORDS']),
  UriTooLong: errorResponse('The URL is longer than LIMIT_HEADER_BYTES allows.', ['ERR_URI_TOO_LONG']),
  UnsupportedMediaType: errorResponse('The Content-Type or Content-Encoding is not one the interface reads.', ['ERR_UNSUPPORTED_MEDIA_TYPE', 'ERR_UNSUPPORTED_ENCODING']),
  RateLimited: errorResponse("The tracker's rate limit is exceeded; nothing was stored.", ['ERR_RATE_LIMITED'], { headers: retryAfter }),
  Unavailable: errorResponse('Redis is unreachable or at the relay’s memory high watermark, or the server is stopping; nothing was stored.', ['ERR_QUEUE_UNAVAILABLE', 'ERR_QUEUE_FULL', 'ERR_SHUTTING_DOWN'], { headers: retryAfter }),
  WebhookUnauthorized: errorResponse('The delivery is not signed with the source’s secret; the message starts with the reason.', ['ERR_WEBHOOK_SIGNATURE']),
  WebhookNotFound: errorResponse('No such tracker or source.', ['ERR_WEBHOOK_NOT_FOUND']),
  HttpBadRequest: errorResponse('Refused by the HTTP server before any route: not valid HTTP/1.1.', ['ERR_BAD_REQUEST']),
  RequestTimeout: errorResponse('The request did not arrive in time.', ['ERR_REQUEST_TIMEOUT']),
  HeadersTooLarge: errorResponse('The request line and headers are larger than LIMIT_HEADER_BYTES.', ['ERR_HEADERS_TOO_LARGE']),
  NotFound: errorResponse('No endpoint at this path.', ['ERR_NOT_FOUND']),
  MethodNotAllowed: errorResponse('The path exists; the method does not (see `Allow`).', ['ERR_METHOD_NOT_ALLOWED'], { headers: { Allow: { description: 'The methods the path accepts.', schema: { type: 'string' } } } }),
  Internal: errorResponse('A fault of the server, logged with its cause.', ['ERR_INTERNAL']),
  AdminInvalid: errorResponse('The admin request is invalid; `field` names the input to fix.', ['ERR_ADMIN_INVALID', 'ERR_MALFORMED_JSON', 'ERR_BAD_REQUEST']),
  AdminUnauthorized: errorResponse('No admin token, or a wrong one.', ['ERR_ADMIN_UNAUTHORIZED'], {
    headers: { 'WWW-Authenticate': { description: '`Bearer realm="tributary-admin"`', schema: { type: 'string' } } },
  }),
  AdminCrossOrigin: errorResponse("A change sent with the console's cookie came from another origin.", ['ERR_ADMIN_CROSS_ORIGIN']),
  AdminNotFound: errorResponse('No such tracker, token, destination or webhook source.', ['ERR_ADMIN_NOT_FOUND']),
  AdminConflict: errorResponse('The change conflicts with the current state.', ['ERR_ADMIN_CONFLICT']),
  AdminBodyTooLarge: errorResponse('An admin body is at most 64 KiB.', ['ERR_PAYLOAD_TOO_LARGE']),
  AdminMediaType: errorResponse('Admin bodies are JSON.', ['ERR_UNSUPPORTED_MEDIA_TYPE']),
  ConsoleNotBuilt: errorResponse('The console is not built: run npm run build.', ['ERR_CONSOLE_NOT_BUILT']),
} as const satisfies Record<string, Response>;

export type ResponseName = keyof typeof RESPONSES;

/** Every `ERR_*` code, as a client generator's enum. Written out, not read from the registry, so the test compares two lists. */
export const ERROR_CODE_ENUM = [
  'ERR_MALFORMED_JSON',
  'ERR_MALFORMED_BASE64',
  'ERR_MALFORMED_ENCODING',
  'ERR_MALFORMED_BODY',
  'ERR_INVALID_PAYLOAD',
  'ERR_EMPTY_BATCH',
  'ERR_NO_VALID_RECORDS',
  'ERR_MISSING_FIELD',
  'ERR_INVALID_FIELD',
  'ERR_RESERVED_FIELD',
  'ERR_TOO_MANY_PROPERTIES',
  'ERR_KEY_TOO_LONG',
  'ERR_VALUE_TOO_LONG',
  'ERR_INVALID_UNICODE',
  'ERR_TOO_DEEP',
  'ERR_BAD_REQUEST',
  'ERR_ADMIN_INVALID',
  'ERR_MISSING_TOKEN',
  'ERR_INVALID_TOKEN',
  'ERR_TOKEN_CONFLICT',
  'ERR_WEBHOOK_SIGNATURE',
  'ERR_ADMIN_UNAUTHORIZED',
  'ERR_ORIGIN_NOT_ALLOWED',
  'ERR_ADMIN_CROSS_ORIGIN',
  'ERR_NOT_FOUND',
  'ERR_WEBHOOK_NOT_FOUND',
  'ERR_ADMIN_NOT_FOUND',
  'ERR_METHOD_NOT_ALLOWED',
  'ERR_ADMIN_CONFLICT',
  'ERR_REQUEST_TIMEOUT',
  'ERR_PAYLOAD_TOO_LARGE',
  'ERR_TOO_MANY_RECORDS',
  'ERR_URI_TOO_LONG',
  'ERR_UNSUPPORTED_MEDIA_TYPE',
  'ERR_UNSUPPORTED_ENCODING',
  'ERR_HEADERS_TOO_LARGE',
  'ERR_RATE_LIMITED',
  'ERR_QUEUE_UNAVAILABLE',
  'ERR_QUEUE_FULL',
  'ERR_SHUTTING_DOWN',
  'ERR_CONSOLE_NOT_BUILT',
  'ERR_INTERNAL',
] as const;

const open = { type: 'object', additionalProperties: true };

export const COMPONENTS: OpenApiDocument['components'] = {
  securitySchemes: {
    trackerHeader: { type: 'apiKey', in: 'header', name: 'Authorization', description: '`Authorization: Tracker <token>`. Another scheme (Basic, Bearer) is not ours and is ignored.' },
    trackerQuery: { type: 'apiKey', in: 'query', name: '_token', description: 'The token as a URL parameter, for pixels, scripts and senders that cannot set headers.' },
    adminBearer: { type: 'http', scheme: 'bearer', description: 'The admin token (ADMIN_TOKEN, or DATA_DIR/admin-token).' },
    adminCookie: { type: 'apiKey', in: 'cookie', name: 'tributary_admin', description: "The console's session cookie, set by POST /admin/api/session. Changes with it must come from the server's own origin." },
  },
  parameters: {
    token: { name: '_token', in: 'query', description: 'The tracker token (one of the three places; see the trackerHeader scheme and `_token` in a JSON body). Never stored.', schema: { type: 'string' } },
    data: { name: 'data', in: 'query', description: 'Base64 JSON (standard or URL-safe, padded or not): a record, or an array of records. Overlays the other URL parameters.', schema: { type: 'string' } },
    fields: {
      name: 'fields',
      in: 'query',
      description: 'Any other URL parameter is a field of the record, as a string (`_event`, `_uid`, `_sid`, `_id`, `_event_at`, free-form properties); a repeated name becomes an array of strings.',
      style: 'form',
      explode: true,
      schema: { type: 'object', additionalProperties: { type: 'string' } },
    },
    idempotencyKey: {
      name: 'Idempotency-Key',
      in: 'header',
      description: 'The key of a single record, or the base of `<key>:<i>` for record i of an array (1 to 128 printable ASCII characters without spaces).',
      schema: { type: 'string', pattern: '^[!-~]{1,128}$' },
    },
    contentEncoding: { name: 'Content-Encoding', in: 'header', description: 'One coding: gzip (x-gzip), deflate, br or identity.', schema: { type: 'string', enum: ['gzip', 'x-gzip', 'deflate', 'br', 'identity'] } },
    trackerId: { name: 'id', in: 'path', required: true, description: 'The tracker id.', schema: { type: 'string' } },
    destinationId: { name: 'dest', in: 'path', required: true, description: 'The destination id.', schema: { type: 'string' } },
    sourceId: { name: 'source', in: 'path', required: true, description: 'The webhook source id.', schema: { type: 'string' } },
  },
  responses: RESPONSES,
  schemas: {
    ErrorCode: { type: 'string', enum: ERROR_CODE_ENUM, description: 'The README lists each code with its status and meaning.' },
    Error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { $ref: '#/components/schemas/ErrorCode' }, message: { type: 'string' }, field: { type: 'string', description: 'The one field at fault, when there is one.' } },
    },
    ErrorAnswer: { type: 'object', required: ['error'], properties: { error: { $ref: '#/components/schemas/Error' } } },
    Record: {
      type: 'object',
      description: 'A user (`_uid` required), a session (`_sid` required) or an event (`_event` required). Other top-level names starting with one underscore are refused; everything else is a free-form property.',
      properties: {
        _uid: { type: ['string', 'number', 'null'] },
        _sid: { type: ['string', 'number', 'null'] },
        _event: { type: 'string', minLength: 1 },
        _event_at: { type: ['string', 'null'], description: '`YYYY-MM-DDThh:mm[:ss[.fff]]` with an optional `Z` or `±hh:mm`; without one, in the tracker’s time zone.' },
        _id: { type: 'string', pattern: '^[!-~]{1,128}$', description: 'The client’s key: deduplicated within the tracker’s window.' },
        _token: { type: 'string', description: 'The tracker token (accepted, never stored).' },
      },
      additionalProperties: true,
    },
    Payload: { oneOf: [{ $ref: '#/components/schemas/Record' }, { type: 'array', minItems: 1, items: { $ref: '#/components/schemas/Record' } }] },
    Accepted: {
      type: 'object',
      description: 'One record: `{accepted, id, duplicate?}`. An array: `{accepted, rejected, duplicates?, results}`, one result per record in order.',
      properties: {
        accepted: { type: 'integer' },
        id: { type: 'string' },
        duplicate: { type: 'boolean' },
        rejected: { type: 'integer' },
        duplicates: { type: 'integer' },
        results: { type: 'array', items: { oneOf: [{ type: 'object', required: ['id'], properties: { id: { type: 'string' }, duplicate: { type: 'boolean' } } }, { type: 'object', required: ['error'], properties: { error: { $ref: '#/components/schemas/Error' } } }] } },
      },
      required: ['accepted'],
    },
    Tracker: { ...open, description: 'A tracker: id, name, tokens, timeZone, corsOrigins, rateLimit, captureContext, dedupWindowHours, partitions, invalidUnicode, destinations, sources, createdAt.' },
    TrackerInput: { ...open, description: 'name, id?, timeZone?, corsOrigins?, rateLimit?, captureContext?, dedupWindowHours?, partitions? (grows, never shrinks), invalidUnicode? (unknown keys are refused by name).' },
    IntegrationView: { ...open, description: 'Every endpoint URL with the token filled in, and a curl command for each form.' },
    Destination: { ...open, description: 'id, type, enabled, settings (secrets as "[redacted]"), rules.' },
    DestinationRules: {
      type: 'object',
      additionalProperties: false,
      description: 'Which records a destination receives and in what shape (README, "Rules"). Refused whole, naming the rule, when one is wrong.',
      properties: {
        filter: { type: 'string', description: 'A CEL expression over the record; the destination receives the records for which it is true.' },
        sample: { type: 'object', required: ['rate'], properties: { rate: { type: 'number', exclusiveMinimum: 0, maximum: 1 }, by: { type: 'string', description: 'Default _uid, else _id.' } } },
        keep: { type: 'array', items: { type: 'string' }, description: 'Only these properties go (`*` matches any run of characters).' },
        drop: { type: 'array', items: { type: 'string' }, description: 'These properties never go.' },
        rename: { type: 'object', additionalProperties: { type: 'string' }, description: 'Old name → new name.' },
        flatten: { oneOf: [{ const: true }, { type: 'object', properties: { separator: { type: 'string' }, depth: { type: 'integer', minimum: 1, maximum: 10 } } }] },
      },
    },
    DestinationView: { ...open, description: 'A destination with its delivery status (`status.skipped`: records its rules kept from it; `status.lastFilterError`).' },
    ArchiveStatus: {
      type: 'object',
      description: 'A tracker’s archive of accepted records, over its partitions (README, "History").',
      properties: {
        days: { type: 'integer', description: 'Days kept; 0: no archive.' },
        records: { type: 'integer', description: 'Records archived since the archive began.' },
        bytes: { type: 'integer', description: 'On disk, as last looked (once a minute).' },
        oldestDay: { type: ['string', 'null'] },
        waiting: { type: 'integer', description: 'Routing steps accepted and not yet on disk.' },
        lastError: { type: ['string', 'null'] },
        missingThrough: { type: ['string', 'null'], description: 'History up to this record id is on another worker host.' },
        lastGap: { type: ['string', 'null'], description: 'The last time the archive stream dropped routing steps before they reached the disk.' },
      },
    },
    RulesPreview: {
      type: 'object',
      required: ['trackerId', 'rules', 'counts', 'records'],
      properties: {
        trackerId: { type: 'string' },
        destinationId: { type: 'string' },
        rules: { oneOf: [{ $ref: '#/components/schemas/DestinationRules' }, { type: 'null' }] },
        counts: { type: 'object', properties: { examined: { type: 'integer' }, delivered: { type: 'integer' }, filtered: { type: 'integer' }, sampled: { type: 'integer' }, errors: { type: 'integer' } } },
        records: { type: 'array', items: { type: 'object', required: ['outcome', 'record'], properties: { outcome: { enum: ['deliver', 'filter', 'sample', 'error'] }, error: { type: 'string' }, record: open } } },
      },
    },
    Source: { ...open, description: 'A webhook source with its `url` and `secret`.' },
    DeadLetter: { type: 'object', properties: { entryId: { type: 'string' }, record: open, error: open, failedAt: { type: 'string' } } },
    RequestEntry: {
      type: 'object',
      required: ['at', 'method', 'endpoint', 'path', 'status', 'bytes', 'records', 'ip'],
      properties: {
        at: { type: 'string', format: 'date-time' },
        method: { type: 'string' },
        endpoint: { type: 'string' },
        path: { type: 'string' },
        query: { type: 'string', description: 'Secret parameters read `[redacted]`.' },
        status: { type: 'integer' },
        code: { $ref: '#/components/schemas/ErrorCode' },
        message: { type: 'string' },
        bytes: { type: 'integer' },
        records: { type: 'integer' },
        rejected: { type: 'integer' },
        duplicates: { type: 'integer' },
        userAgent: { type: 'string' },
        ip: { type: 'string' },
        tokenHint: { type: 'string', description: 'Unknown-token list only: the token’s first characters.' },
        suppressed: { type: 'integer', description: 'Requests not kept before this one: unknown tokens over the per-minute allowance, or a tracker’s accepted requests over its allowance a second.' },
      },
    },
    RequestPage: {
      type: 'object',
      required: ['total', 'matched', 'entries'],
      properties: { total: { type: 'integer' }, matched: { type: 'integer' }, entries: { type: 'array', items: { $ref: '#/components/schemas/RequestEntry' } } },
    },
    DestinationPicture: {
      type: 'object',
      description: 'A destination’s last 24 hours, a point a minute (1 440, oldest first); `backlog` and `lagMs` are null where no worker sampled them.',
      required: ['start', 'stepSeconds', 'delivered', 'deadLettered', 'backlog', 'lagMs', 'totals', 'markers'],
      properties: {
        start: { type: 'string', format: 'date-time' },
        stepSeconds: { type: 'integer', const: 60 },
        delivered: { type: 'array', items: { type: 'integer' } },
        deadLettered: { type: 'array', items: { type: 'integer' } },
        backlog: { type: 'array', items: { type: ['integer', 'null'] } },
        lagMs: { type: 'array', items: { type: ['integer', 'null'] } },
        totals: { type: 'object', required: ['delivered', 'deadLettered'], properties: { delivered: { type: 'integer' }, deadLettered: { type: 'integer' } } },
        markers: {
          type: 'array',
          description: 'The last 100 changes of state, newest first.',
          items: {
            type: 'object',
            required: ['at', 'state', 'from'],
            properties: {
              at: { type: 'string', format: 'date-time' },
              state: { type: 'string', enum: ['delivering', 'failing', 'paused', 'disabled'] },
              from: { type: 'string', enum: ['', 'delivering', 'failing', 'paused', 'disabled'], description: 'The state before; empty on the first start.' },
              message: { type: 'string' },
              partition: { type: 'integer', description: 'The tracker partition whose delivery changed, when the tracker has several.' },
            },
          },
        },
      },
    },
    TrafficPicture: {
      type: 'object',
      description: 'A tracker’s records per minute over the last 24 hours (1 440 points, oldest first), by endpoint and outcome.',
      required: ['start', 'stepSeconds', 'totals', 'series'],
      properties: {
        start: { type: 'string', format: 'date-time', description: 'The first minute of the window; the last is the current minute.' },
        stepSeconds: { type: 'integer', const: 60 },
        totals: { type: 'object', required: ['accepted', 'duplicate', 'refused'], properties: { accepted: { type: 'integer' }, duplicate: { type: 'integer' }, refused: { type: 'integer' } } },
        series: {
          type: 'array',
          items: {
            type: 'object',
            required: ['endpoint', 'outcome', 'total', 'counts'],
            properties: {
              endpoint: { type: 'string', description: 'The route that answered (`/v3/event`), `unmatched`, or `other` past the per-minute cap.' },
              outcome: { type: 'string', description: '`accepted`, `duplicate`, an `ERR_*` code, or `refused` past the per-minute cap.' },
              total: { type: 'integer' },
              counts: { type: 'array', items: { type: 'integer' }, minItems: 1440, maxItems: 1440 },
            },
          },
        },
      },
    },
  },
};
