import { ref } from './components';
import { errors, SERVER_ERRORS } from './responses';
import type { MediaType, Operation, PathItem } from './types';

const KINDS = {
  user: 'Create or update a user by `_uid`.',
  session: 'Create or update a session by `_sid`.',
  event: 'Append an event.',
} as const;

const TOKEN_SECURITY: Array<Record<string, string[]>> = [{ trackerHeader: [] }, { trackerQuery: [] }, {}];
const TOKEN_NOTE =
  'The token goes in one of three places: `Authorization: Tracker <token>`, `_token` in a JSON body (on any record of an array), or `?_token=`. Two places carrying different tokens are refused (`ERR_TOKEN_CONFLICT`). The empty security requirement stands for the body.';

const V3_ERRORS = errors('V3BadRequest', 'V3Unauthorized', 'V3Forbidden', 'PayloadTooLarge', 'UriTooLong', 'UnsupportedMediaType', 'RateLimited', 'Unavailable', ...SERVER_ERRORS);

const accepted = {
  '200': { description: 'Every valid record was a duplicate of one accepted before: nothing new stored.', content: { 'application/json': { schema: ref('schemas/Accepted') } } },
  '202': { description: 'Stored in Redis: one record (`{accepted: 1, id}`), or an array with one result per record.', content: { 'application/json': { schema: ref('schemas/Accepted') } } },
};

const head: Operation = {
  operationId: '',
  summary: 'Headers only: nothing is stored and the token is not checked (link checkers, monitors).',
  tags: ['v3'],
  security: [{}],
  responses: { '204': { description: 'No content.' } },
};

function recordOps(kind: keyof typeof KINDS): PathItem {
  const query = [ref('parameters/token'), ref('parameters/data'), ref('parameters/fields')];
  return {
    get: {
      operationId: `${kind}Get`,
      summary: `${KINDS[kind]} From URL parameters or \`data=\`.`,
      description: TOKEN_NOTE,
      tags: ['v3'],
      security: TOKEN_SECURITY,
      parameters: [...query, ref('parameters/idempotencyKey')],
      responses: { ...accepted, ...V3_ERRORS },
    },
    post: {
      operationId: `${kind}Post`,
      summary: `${KINDS[kind]} From a JSON, text/plain (holding JSON) or form body, over the URL parameters.`,
      description: `${TOKEN_NOTE} A body without Content-Type is read as JSON.`,
      tags: ['v3'],
      security: TOKEN_SECURITY,
      parameters: [...query, ref('parameters/idempotencyKey'), ref('parameters/contentEncoding')],
      requestBody: {
        content: {
          'application/json': { schema: ref('schemas/Payload') },
          'text/plain': { schema: { type: 'string', description: 'JSON text, as navigator.sendBeacon sends it.' } },
          'application/x-www-form-urlencoded': { schema: { type: 'object', additionalProperties: { type: 'string' } } },
        },
      },
      responses: { ...accepted, ...V3_ERRORS },
    },
    head: { ...head, operationId: `${kind}Head` },
  };
}

function fixedOps(kind: keyof typeof KINDS, fixed: 'gif' | 'js'): PathItem {
  const body: Record<string, MediaType> = fixed === 'gif' ? { 'image/gif': { schema: { type: 'string', contentMediaType: 'image/gif', description: 'A transparent 1×1 GIF.' } } } : { 'application/javascript': { schema: { type: 'string', maxLength: 0 } } };
  const fixedErrors = Object.fromEntries(
    Object.entries(V3_ERRORS).map(([status]) => [
      status,
      {
        description: `The same fixed body with the error status; the code is in \`X-Tributary-Error\` (see the JSON endpoint's ${status} answer for the codes).`,
        headers: { 'X-Tributary-Error': { description: 'The `ERR_*` code.', schema: { $ref: '#/components/schemas/ErrorCode' } } },
        content: body,
      },
    ]),
  );
  return {
    get: {
      operationId: `${kind}${fixed === 'gif' ? 'Pixel' : 'Script'}`,
      summary: `${KINDS[kind]} As a ${fixed === 'gif' ? 'tracking pixel (`<img src>`)' : 'script (`<script src>`)'}: never answers JSON.`,
      description: TOKEN_NOTE,
      tags: ['v3'],
      security: TOKEN_SECURITY,
      parameters: [ref('parameters/token'), ref('parameters/data'), ref('parameters/fields'), ref('parameters/idempotencyKey')],
      responses: { '200': { description: 'At least one record was accepted (or was a duplicate).', content: body }, ...fixedErrors },
    },
    head: { ...head, operationId: `${kind}${fixed === 'gif' ? 'Pixel' : 'Script'}Head` },
  };
}

export const V3_PATHS: Record<string, PathItem> = {
  ...Object.fromEntries(
    (Object.keys(KINDS) as Array<keyof typeof KINDS>).flatMap((kind) => [
      [`/v3/${kind}`, recordOps(kind)],
      [`/v3/${kind}/tracker.gif`, fixedOps(kind, 'gif')],
      [`/v3/${kind}/tracker.js`, fixedOps(kind, 'js')],
    ]),
  ),
  '/v3/import/{kind}': {
    parameters: [{ name: 'kind', in: 'path', required: true, description: 'What the records are.', schema: { type: 'string', enum: ['event', 'user', 'session'] } }],
    post: {
      operationId: 'importRecords',
      summary: 'Import past records (a file, or a piece of one): checked as the v3 endpoints check them, archived, and sent to every destination in the history lane, which yields to live records.',
      description:
        'The body streams as it arrives (gzip undone), so its size is not limited as a record request’s is. A record without `_id` gets one made from the tracker, the kind, its line number and its text: sending the same body again, with the same `first_line`, stores nothing twice. `_event_at` is kept as given (years back); `_received_at` in the body is ignored. A refused line is reported by its number and the import goes on. The answer comes once every record is in the lane, which waits for delivery when it is full: send a big file in pieces of about 100 000 lines.',
      tags: ['v3'],
      security: [{ trackerHeader: [] }, { trackerQuery: [] }],
      parameters: [
        ref('parameters/token'),
        { name: 'first_line', in: 'query', required: false, description: 'The number of the body’s first line in its file (default 1): a file sent in pieces keeps its lines’ numbers, so their `_id`s.', schema: { type: 'integer', minimum: 1 } },
        ref('parameters/contentEncoding'),
      ],
      requestBody: {
        required: true,
        content: {
          'application/x-ndjson': { schema: { type: 'string', description: 'One JSON object a line (also application/jsonl, text/plain, or no Content-Type).' } },
          'text/csv': { schema: { type: 'string', description: 'A header row naming the fields, then one record a row. Plain decimal numbers (without a leading zero) become numbers, true/false booleans, an empty cell no property.' } },
          'application/json': { schema: { type: 'array', items: { type: 'object', additionalProperties: true }, description: 'One array of records, read whole (up to 256 MiB).' } },
        },
      },
      responses: {
        '200': { description: 'Every valid record is in the history lane.', content: { 'application/json': { schema: ref('schemas/ImportSummary') } } },
        ...errors('V3BadRequest', 'V3Unauthorized', 'UnsupportedMediaType', 'Unavailable', ...SERVER_ERRORS),
      },
    },
  },
  '/v3/webhooks/{tracker}/{source}': {
    parameters: [
      { name: 'tracker', in: 'path', required: true, description: 'The tracker id.', schema: { type: 'string' } },
      { name: 'source', in: 'path', required: true, description: 'The source id.', schema: { type: 'string' } },
    ],
    post: {
      operationId: 'webhookDelivery',
      summary: "A SaaS webhook delivery to a tracker's source: verified on its raw bytes with the source's secret, mapped to one event.",
      description: 'Signed per the source type (GitHub, Stripe, Shopify, Slack, Standard Webhooks, or a generic HMAC header); the tracker token is not used here.',
      tags: ['webhooks'],
      security: [{}],
      requestBody: { content: { 'application/json': { schema: { type: 'object', additionalProperties: true } }, 'application/x-www-form-urlencoded': { schema: { type: 'object', additionalProperties: { type: 'string' } } } } },
      responses: {
        '200': {
          description: 'Stored (`{accepted: 1, id, event}`), a duplicate delivery (`{accepted: 0, duplicate: true, id, event}`), or a handshake answered (`{challenge}`).',
          content: { 'application/json': { schema: { type: 'object', additionalProperties: true } } },
        },
        ...errors('WebhookUnauthorized', 'WebhookNotFound', 'PayloadTooLarge', 'UnsupportedMediaType', 'RateLimited', 'Unavailable', ...SERVER_ERRORS),
      },
    },
  },
};
