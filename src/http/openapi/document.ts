import Router from '@koa/router';
import { ADMIN_PATHS } from './admin-paths';
import { COMPONENTS } from './components';
import { errors, SERVER_ERRORS } from './responses';
import { SEGMENT_PATHS } from './segment-paths';
import type { OpenApiDocument, PathItem } from './types';
import { V3_PATHS } from './v3-paths';

/** Where the document is served, by the API process, without authentication. */
export const OPENAPI_PATH = '/openapi.json';

const text = (type: string) => ({ [type]: { schema: { type: 'string' } } });

const OPS_PATHS: Record<string, PathItem> = {
  '/healthz': {
    get: { operationId: 'healthz', summary: 'This process is up (with its pid: in cluster mode each API process answers for itself).', tags: ['operations'], security: [], responses: { '200': { description: '`{status: "ok", pid}`' }, ...errors('HttpBadRequest', ...SERVER_ERRORS) } },
  },
  '/readyz': {
    get: {
      operationId: 'readyz',
      summary: 'Redis answers.',
      tags: ['operations'],
      security: [],
      responses: { '200': { description: '`{status: "ready", redis: "ok"}`' }, '503': { description: '`{status: "unavailable", redis: <reason>}`' }, ...errors('HttpBadRequest', 'RequestTimeout', 'HeadersTooLarge', 'MethodNotAllowed') },
    },
  },
  '/metrics': {
    get: {
      operationId: 'metrics',
      summary: 'Prometheus exposition text.',
      tags: ['operations'],
      security: [],
      responses: { '200': { description: 'Metrics.', content: text('text/plain') }, '503': { description: 'Cluster mode: the host’s figures are unavailable.', content: text('text/plain') }, ...errors('HttpBadRequest', 'RequestTimeout', 'HeadersTooLarge', 'MethodNotAllowed') },
    },
  },
  [OPENAPI_PATH]: {
    get: { operationId: 'openapi', summary: 'This document.', tags: ['operations'], security: [], responses: { '200': { description: 'OpenAPI 3.1 JSON.', content: { 'application/json': { schema: { type: 'object' } } } }, ...errors('HttpBadRequest', ...SERVER_ERRORS) } },
  },
  '/sdk.js': {
    get: {
      operationId: 'sdk',
      summary: 'The browser SDK, current version (docs/websites.md); cacheable for an hour.',
      tags: ['websites'],
      security: [],
      responses: { '200': { description: 'The script, gzipped when accepted.', content: text('text/javascript') }, '304': { description: 'Unchanged (ETag).' }, ...errors('SdkNotBuilt', 'HttpBadRequest', ...SERVER_ERRORS) },
    },
  },
  '/sdk.{hash}.js': {
    parameters: [{ name: 'hash', in: 'path', required: true, description: 'The version: the first 16 hex digits of its SHA-256, as `trackers show` prints it.', schema: { type: 'string' } }],
    get: {
      operationId: 'sdkPinned',
      summary: 'The browser SDK of that version only, cacheable for ever (immutable); another version is a 404 naming the current one.',
      tags: ['websites'],
      security: [],
      responses: { '200': { description: 'The script.', content: text('text/javascript') }, '304': { description: 'Unchanged (ETag).' }, ...errors('NotFound', 'SdkNotBuilt', 'HttpBadRequest', ...SERVER_ERRORS) },
    },
  },
  '/analytics.js/v1/{writeKey}/analytics.min.js': {
    parameters: [{ name: 'writeKey', in: 'path', required: true, description: 'The tracker token, as Segment’s snippet puts it in the URL.', schema: { type: 'string' } }],
    get: {
      operationId: 'analyticsJs',
      summary: 'Segment’s analytics.js (@segment/analytics-next’s standalone build), at the path of Segment’s CDN: the snippet loads it with its host changed (docs/segment.md).',
      tags: ['segment'],
      security: [],
      responses: { '200': { description: 'The script, gzipped when accepted; cacheable for an hour.', content: text('text/javascript') }, ...errors('NotFound', 'HttpBadRequest', ...SERVER_ERRORS) },
    },
  },
  '/analytics.js/v1/{writeKey}/platform/analytics.min.js': {
    parameters: [{ name: 'writeKey', in: 'path', required: true, schema: { type: 'string' } }],
    get: { operationId: 'analyticsJsPlatform', summary: 'The same script, at the path some versions of the snippet use.', tags: ['segment'], security: [], responses: { '200': { description: 'The script.', content: text('text/javascript') }, ...errors('NotFound', 'HttpBadRequest', ...SERVER_ERRORS) } },
  },
  '/analytics-next/bundles/{file}': {
    parameters: [{ name: 'file', in: 'path', required: true, description: 'A chunk named by its content (`<name>.bundle.<hash>.js`).', schema: { type: 'string' } }],
    get: { operationId: 'analyticsJsChunk', summary: 'A part analytics.js loads on demand; cacheable for ever.', tags: ['segment'], security: [], responses: { '200': { description: 'The chunk.', content: text('text/javascript') }, ...errors('NotFound', 'HttpBadRequest', ...SERVER_ERRORS) } },
  },
  '/admin': {
    get: {
      operationId: 'console',
      summary: 'The owner’s console (HTML); its API is /admin/api.',
      tags: ['console'],
      security: [],
      responses: { '200': { description: 'The page.', content: text('text/html') }, ...errors('ConsoleNotBuilt', 'HttpBadRequest', ...SERVER_ERRORS) },
    },
  },
  '/admin/assets/{name}': {
    parameters: [{ name: 'name', in: 'path', required: true, schema: { type: 'string' } }],
    get: { operationId: 'consoleAsset', summary: 'A file of the console (module, stylesheet).', tags: ['console'], security: [], responses: { '200': { description: 'The file.' }, '304': { description: 'Unchanged (ETag).' }, ...errors('NotFound', 'HttpBadRequest', ...SERVER_ERRORS) } },
  },
  '/admin/vendor/{name}': {
    parameters: [{ name: 'name', in: 'path', required: true, schema: { type: 'string' } }],
    get: { operationId: 'consoleVendor', summary: 'Preact, as the console’s import map names it.', tags: ['console'], security: [], responses: { '200': { description: 'The module.' }, '304': { description: 'Unchanged (ETag).' }, ...errors('NotFound', 'HttpBadRequest', ...SERVER_ERRORS) } },
  },
};

/**
 * The HTTP interface as OpenAPI 3.1: the v3 ingest interface, Segment's HTTP API under /v1,
 * webhook sources, the admin API and the operational endpoints. Written by hand, typed;
 * test/http/openapi.test.ts fails when a route, a parameter or an error code is on one side only
 * (the Koa routers and src/core/errors.ts).
 */
export const OPENAPI_DOCUMENT: OpenApiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'Tributary',
    version: '3',
    description:
      'An ingestion relay for users, sessions and events. Every error answer is `{"error": {code, message, field?}}`, except the pixel and the script, which keep their fixed body and name the code in `X-Tributary-Error`, and the `/v1` paths (Segment’s HTTP API), whose answers are `{"success": false, code, message, field?, error: {code, message, field?}}` as Segment’s SDKs read them. Any path may also answer `404 ERR_NOT_FOUND` or `405 ERR_METHOD_NOT_ALLOWED` (see components.responses.NotFound and MethodNotAllowed), and the HTTP server may refuse a request before any route with `400 ERR_BAD_REQUEST`.',
    license: { name: 'MIT', identifier: 'MIT' },
  },
  tags: [
    { name: 'v3', description: 'Sending users, sessions and events.' },
    { name: 'segment', description: 'Segment’s HTTP Tracking API, for Segment’s and RudderStack’s SDKs pointed at `<relay>/v1` (docs/segment.md); the write key is a tracker token.' },
    { name: 'webhooks', description: 'SaaS webhook deliveries to a tracker’s sources.' },
    { name: 'admin', description: 'The JSON API behind the console; the same operations as the CLI.' },
    { name: 'operations', description: 'Health, readiness, metrics, this document.' },
    { name: 'console', description: 'The console’s page and files.' },
    { name: 'websites', description: 'The browser SDK that web pages load.' },
  ],
  paths: { ...V3_PATHS, ...SEGMENT_PATHS, ...OPS_PATHS, ...ADMIN_PATHS },
  components: COMPONENTS,
};

/** `GET /openapi.json`, open to anyone (API tools, client generators) like /healthz; the text is built once. */
export function createOpenApiRouter(): Router {
  const router = new Router();
  const body = JSON.stringify(OPENAPI_DOCUMENT);
  router.get(OPENAPI_PATH, (ctx) => {
    ctx.type = 'application/json';
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = body;
  });
  return router;
}
