import { SEGMENT_LIMITS } from '../../ingest/segment/limits';
import { SEGMENT_TYPES } from '../../ingest/segment/map-message';
import type { JsonSchema, Response } from './types';

const schema = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const errorJson = { 'application/json': { schema: schema('SegmentErrorAnswer') } };
const retryAfter = { 'Retry-After': { description: 'Seconds to wait before sending again (every Segment SDK honours it).', schema: { type: 'integer', minimum: 1 } } };

function segmentError(description: string, codes: readonly string[], extra: Partial<Response> = {}): Response {
  return { description: `${description} \`code\` (and \`error.code\`) is one of: ${codes.map((c) => `\`${c}\``).join(', ')}.`, content: errorJson, 'x-error-codes': codes, ...extra };
}

const kib = (bytes: number) => `${bytes / 1024} KiB`;

/**
 * The error answers of the `/v1` paths: the same codes and statuses as v3, in the body Segment's
 * SDKs read (src/ingest/segment/segment-answers.ts). Refusals of the HTTP server itself (408, 431)
 * come before any route and keep v3's body.
 */
export const SEGMENT_RESPONSES = {
  SegmentBadRequest: segmentError(
    'The body is not a batch, or (on a single-call path) its one message is refused; nothing was stored. Within a batch a refused message is reported in the 200’s `errors` and the others are stored.',
    [
      'ERR_MALFORMED_JSON',
      'ERR_MALFORMED_ENCODING',
      'ERR_MALFORMED_BODY',
      'ERR_INVALID_PAYLOAD',
      'ERR_EMPTY_BATCH',
      'ERR_MISSING_FIELD',
      'ERR_INVALID_FIELD',
      'ERR_TOO_MANY_PROPERTIES',
      'ERR_KEY_TOO_LONG',
      'ERR_VALUE_TOO_LONG',
      'ERR_INVALID_UNICODE',
      'ERR_TOO_DEEP',
      'ERR_BAD_REQUEST',
    ],
  ),
  SegmentUnauthorized: segmentError('No write key, an unknown or revoked one, or two different ones (the header and the body; on a single-call path, the header and the message).', ['ERR_MISSING_TOKEN', 'ERR_INVALID_TOKEN', 'ERR_TOKEN_CONFLICT']),
  SegmentForbidden: segmentError("The request's Origin is not in the tracker's CORS origins.", ['ERR_ORIGIN_NOT_ALLOWED']),
  SegmentPayloadTooLarge: segmentError(
    `The decoded body is over ${kib(SEGMENT_LIMITS.batchBytes)} (a single call: ${kib(SEGMENT_LIMITS.messageBytes)}; both within LIMIT_DECODED_BYTES), or the batch holds more than ${SEGMENT_LIMITS.batchMessages} messages.`,
    ['ERR_PAYLOAD_TOO_LARGE', 'ERR_TOO_MANY_RECORDS'],
  ),
  SegmentUnsupportedMediaType: segmentError('The Content-Type or Content-Encoding is not one the interface reads.', ['ERR_UNSUPPORTED_MEDIA_TYPE', 'ERR_UNSUPPORTED_ENCODING']),
  SegmentRateLimited: segmentError("The tracker's rate limit is exceeded; nothing was stored.", ['ERR_RATE_LIMITED'], { headers: retryAfter }),
  SegmentUnavailable: segmentError('Redis is unreachable or at the relay’s memory high watermark, or the server is stopping; nothing was stored.', ['ERR_QUEUE_UNAVAILABLE', 'ERR_QUEUE_FULL', 'ERR_SHUTTING_DOWN'], { headers: retryAfter }),
  SegmentMethodNotAllowed: segmentError('The path exists; the method does not (see `Allow`).', ['ERR_METHOD_NOT_ALLOWED'], { headers: { Allow: { description: 'The methods the path accepts.', schema: { type: 'string' } } } }),
  SegmentInternal: segmentError('A fault of the server, logged with its cause.', ['ERR_INTERNAL']),
} as const satisfies Record<string, Response>;

const open = { type: 'object', additionalProperties: true };
const id = { type: ['string', 'number'] };

export const SEGMENT_SCHEMAS: Record<string, JsonSchema> = {
  SegmentMessage: {
    type: 'object',
    description:
      'One message of Segment’s spec. identify is stored as a user (`_uid` = userId ?? anonymousId, traits as properties); the other types as events (track: `event`; page: `page_view`; screen: `screen_view`; group; alias). `messageId` is the record’s key: a repeat within the tracker’s deduplication window is stored once. Other fields are kept as properties.',
    properties: {
      type: { enum: Object.keys(SEGMENT_TYPES), description: 'Required in a batch; a single-call path sets it.' },
      messageId: { type: 'string' },
      userId: id,
      anonymousId: { ...id, description: 'userId or anonymousId is required.' },
      event: { type: 'string', minLength: 1, description: 'track only, required.' },
      name: { type: 'string' },
      category: { type: 'string' },
      groupId: id,
      previousId: id,
      traits: open,
      properties: open,
      context: { ...open, description: 'Kept one level flattened (`context_page_url`, `context_library_name`…); `context.sessionId` names the session.' },
      integrations: { ...open, description: '`integrations["Actions Amplitude"].session_id` names the session too.' },
      timestamp: { type: 'string', description: 'ISO 8601, the client’s clock; corrected by `receivedAt − sentAt` past SEGMENT_CLOCK_SKEW_SECONDS.' },
      originalTimestamp: { type: 'string' },
      sentAt: { type: 'string' },
      writeKey: { type: 'string', description: 'The tracker token; another than the request’s refuses this message.' },
    },
    additionalProperties: true,
  },
  SegmentBatch: {
    type: 'object',
    required: ['batch'],
    properties: {
      batch: { type: 'array', minItems: 1, maxItems: SEGMENT_LIMITS.batchMessages, items: { allOf: [schema('SegmentMessage'), { required: ['type'] }] } },
      writeKey: { type: 'string', description: 'The tracker token, when no Authorization header carries it.' },
      sentAt: { type: 'string', description: 'For every message without its own.' },
      context: { ...open, description: 'Merged into every message’s context (the message’s keys win).' },
      integrations: { ...open, description: 'Merged into every message’s integrations.' },
    },
  },
  SegmentBatchAnswer: {
    type: 'object',
    description: 'The batch was read: each message stored, a repeat, or refused alone.',
    required: ['success', 'accepted', 'rejected'],
    properties: {
      success: { const: true },
      accepted: { type: 'integer', description: 'Messages stored by this request.' },
      duplicates: { type: 'integer', description: 'Messages whose messageId was stored before: not stored again. Absent when 0.' },
      rejected: { type: 'integer' },
      errors: {
        type: 'array',
        description: 'The refused messages, in order. Absent when none.',
        items: { type: 'object', required: ['index', 'code', 'message'], properties: { index: { type: 'integer' }, messageId: { type: 'string' }, code: schema('ErrorCode'), message: { type: 'string' }, field: { type: 'string' } } },
      },
    },
  },
  SegmentSingleAnswer: {
    type: 'object',
    required: ['success', 'accepted', 'id'],
    properties: {
      success: { const: true },
      accepted: { enum: [0, 1] },
      duplicate: { const: true, description: 'The messageId was stored before: nothing stored now.' },
      id: { type: 'string', description: 'The record’s `_id`: the messageId (hashed to `seg-<32 hex>` when it is not 1–128 printable ASCII), else a new id.' },
    },
  },
  SegmentErrorAnswer: {
    type: 'object',
    description: '`code` and `message` at the top are what analytics-python reads before it drops a 4xx; `success` is what analytics-java reads; `error` is v3’s shape.',
    required: ['success', 'code', 'message', 'error'],
    properties: { success: { const: false }, code: schema('ErrorCode'), message: { type: 'string' }, field: { type: 'string' }, error: schema('Error') },
  },
  SegmentSettings: {
    type: 'object',
    description: 'What analytics.js loads before it sends, and the mobile SDKs from their cdnHost: one integration, no remote plugins, metrics off.',
    required: ['integrations'],
    properties: {
      integrations: {
        type: 'object',
        required: ['Segment.io'],
        properties: {
          'Segment.io': {
            type: 'object',
            required: ['apiKey', 'apiHost', 'protocol'],
            properties: {
              apiKey: { type: 'string', description: 'The write key: analytics.js puts it in every event and its Basic header.' },
              apiHost: { type: 'string', description: '`<host>/v1` of this request: the SDKs send there (the mobile SDKs over their own setting).' },
              protocol: { enum: ['http', 'https'] },
            },
          },
        },
      },
    },
    additionalProperties: true,
  },
};
