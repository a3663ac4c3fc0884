import { SEGMENT_PREFIX } from '../../ingest/segment/segment-answers';
import { SEGMENT_BATCH_PATHS, SEGMENT_SINGLE_PATHS } from '../../ingest/segment/segment-routes';
import { ref, type ResponseName } from './components';
import { errors } from './responses';
import type { JsonSchema, Operation, PathItem, Reference } from './types';

/** Who calls each batch path (segment-routes.ts), for its summary. */
const BATCH_CALLERS: Readonly<Record<(typeof SEGMENT_BATCH_PATHS)[number], string>> = {
  '/batch': 'analytics-node, analytics-python, analytics-go, RudderStack’s server SDKs',
  '/import': 'analytics-ruby',
  '/import/': 'analytics-java, with its trailing slash',
  '/b': 'analytics.js in batching mode, analytics-swift, analytics-kotlin, React Native',
};

const WRITE_KEY_SECURITY: Array<Record<string, string[]>> = [{ segmentBasic: [] }, { trackerHeader: [] }, {}];
const WRITE_KEY_NOTE =
  'The write key is a tracker token, read from `Authorization: Basic base64("<key>:")` (or v3’s `Tracker <token>`), else `writeKey` at the body’s root, else the first message’s `writeKey`. A header and a root key that differ are refused (`ERR_TOKEN_CONFLICT`). The empty security requirement stands for the body.';

const SERVER: ResponseName[] = ['RequestTimeout', 'HeadersTooLarge', 'SegmentMethodNotAllowed', 'SegmentInternal'];
const INTAKE_ERRORS = errors('SegmentBadRequest', 'SegmentUnauthorized', 'SegmentForbidden', 'SegmentPayloadTooLarge', 'SegmentUnsupportedMediaType', 'SegmentRateLimited', 'SegmentUnavailable', ...SERVER);

const json = (schema: JsonSchema | Reference) => ({ 'application/json': { schema } });
/** analytics.js posts text/plain (no CORS preflight for the type); the other SDKs application/json. */
const body = (schema: Reference) => ({ required: true, content: { ...json(schema), 'text/plain': { schema: { type: 'string', description: 'The same JSON, as analytics.js sends it.' } } } });

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

function batchOp(path: (typeof SEGMENT_BATCH_PATHS)[number]): Operation {
  return {
    operationId: `segment${cap(path.replace(/\W/g, ''))}${path.endsWith('/') ? 'Slash' : ''}`,
    summary: `A batch of Segment messages (${BATCH_CALLERS[path]}).`,
    description: `${WRITE_KEY_NOTE} The batch’s \`context\` and \`integrations\` are merged into each message. One refused message never fails the others.`,
    tags: ['segment'],
    security: WRITE_KEY_SECURITY,
    parameters: [ref('parameters/contentEncoding')],
    requestBody: body(ref('schemas/SegmentBatch')),
    responses: { '200': { description: 'Read: every message stored, a repeat, or listed in `errors`.', content: json(ref('schemas/SegmentBatchAnswer')) }, ...INTAKE_ERRORS },
  };
}

function singleOp(path: string, type: string): Operation {
  const short = path.slice(1) !== type;
  return {
    operationId: `segment${cap(type)}${short ? 'Short' : ''}`,
    summary: short ? `One ${type} message, as analytics.js sends it by default (the type’s first letter).` : `One ${type} message (Segment’s HTTP Tracking API).`,
    description: `The message’s \`type\` is ${type}, whatever the body says. ${WRITE_KEY_NOTE}`,
    tags: ['segment'],
    security: WRITE_KEY_SECURITY,
    parameters: [ref('parameters/contentEncoding')],
    requestBody: body(ref('schemas/SegmentMessage')),
    responses: { '200': { description: 'Stored, or a repeat of a stored messageId.', content: json(ref('schemas/SegmentSingleAnswer')) }, ...INTAKE_ERRORS },
  };
}

/**
 * Segment's HTTP Tracking API under `/v1`, every path from the lists the router registers, so a
 * path added there is documented here (test/http/openapi.test.ts holds the two to each other).
 */
export const SEGMENT_PATHS: Record<string, PathItem> = {
  ...Object.fromEntries(SEGMENT_BATCH_PATHS.map((path) => [`${SEGMENT_PREFIX}${path}`, { post: batchOp(path) }])),
  ...Object.fromEntries(Object.entries(SEGMENT_SINGLE_PATHS).map(([path, type]) => [`${SEGMENT_PREFIX}${path}`, { post: singleOp(path, type) }])),
  [`${SEGMENT_PREFIX}/m`]: {
    post: {
      operationId: 'segmentMetrics',
      summary: 'analytics.js’s own error metrics: answered, so that it does not retry them, and dropped.',
      tags: ['segment'],
      security: [],
      responses: { '200': { description: 'Dropped.', content: json({ type: 'object', required: ['success'], properties: { success: { const: true } } }) }, ...errors(...SERVER) },
    },
  },
  [`${SEGMENT_PREFIX}/projects/{writeKey}/settings`]: {
    parameters: [{ name: 'writeKey', in: 'path', required: true, description: 'The tracker token.', schema: { type: 'string' } }],
    get: {
      operationId: 'segmentSettings',
      summary: 'The settings analytics.js fetches from `<cdnURL>/v1/projects/<writeKey>/settings` before it sends, and the mobile SDKs from `https://<cdnHost>/projects/<writeKey>/settings`.',
      description: 'Cacheable for a few minutes. `integrations["Segment.io"].apiKey` is the write key analytics.js puts in every event; `apiHost` names this relay. An unknown write key is a 401.',
      tags: ['segment'],
      security: [],
      responses: {
        '200': { description: 'The settings.', headers: { 'Cache-Control': { description: '`public, max-age=<seconds>`', schema: { type: 'string' } } }, content: json(ref('schemas/SegmentSettings')) },
        ...errors('SegmentUnauthorized', 'SegmentForbidden', 'SegmentUnavailable', ...SERVER),
      },
    },
  },
};
