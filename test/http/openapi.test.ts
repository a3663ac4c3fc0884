import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type Router from '@koa/router';
import { createConsoleRouter } from '../../src/admin/console-assets';
import { DeadLetterQuery } from '../../src/admin/destination-routes';
import { RequestQuery } from '../../src/admin/request-routes';
import { createAdminRouter } from '../../src/admin/router';
import { loadConfig } from '../../src/core/config';
import { ERROR_CODES } from '../../src/core/errors';
import { ERROR_CODE_ENUM, RESPONSES } from '../../src/http/openapi/components';
import { AuditQuerySchema } from '../../src/core/access/audit-log';
import { createOpenApiRouter, OPENAPI_DOCUMENT, OPENAPI_PATH } from '../../src/http/openapi/document';
import { STATUS_OF } from '../../src/http/openapi/responses';
import type { Method, Operation, Parameter, Reference, Response } from '../../src/http/openapi/types';
import { createOpsRouter } from '../../src/http/ops-routes';
import { createSdkRouter } from '../../src/http/sdk-routes';
import { createAnalyticsJsRouter } from '../../src/http/analytics-js-routes';
import { URL_PARAMETERS } from '../../src/ingest/payload';
import { createV3Router } from '../../src/ingest/v3-routes';
import { createImportRouter } from '../../src/ingest/import-route';
import { SEGMENT_PREFIX } from '../../src/ingest/segment/segment-answers';
import { createSegmentRouter, SEGMENT_BATCH_PATHS, SEGMENT_SINGLE_PATHS } from '../../src/ingest/segment/segment-routes';
import { createWebhookRouter } from '../../src/ingest/webhooks/route';
import { useAdminApi } from '../helpers/admin-api';

const doc = OPENAPI_DOCUMENT;
const METHODS: Method[] = ['get', 'post', 'put', 'patch', 'delete', 'head'];

/** Every router the API process mounts (src/boot/app.ts); building one registers its routes without touching its dependencies. */
function routers(): Router[] {
  return [
    createV3Router({ config: loadConfig({}) } as never),
    createSegmentRouter({} as never),
    createWebhookRouter({} as never),
    createImportRouter({} as never),
    createOpsRouter({} as never),
    createOpenApiRouter(),
    createSdkRouter(),
    createAnalyticsJsRouter(),
    createAdminRouter({ access: {} } as never, {} as never).router,
    createConsoleRouter(),
  ];
}

/**
 * `/v3/webhooks/:tracker/:source` → `/v3/webhooks/{tracker}/{source}`; `/admin/` → `/admin`. The
 * Segment router is strict: its `/v1/import/` (analytics-java's) is a route of its own.
 */
const openApiPath = (koaPath: string) => {
  const p = koaPath.replace(/:(\w+)/g, '{$1}');
  return p.startsWith(`${SEGMENT_PREFIX}/`) ? p : p.replace(/(.)\/$/, '$1');
};

interface CodeRoute {
  key: string;
  params: string[];
}

function codeRoutes(): CodeRoute[] {
  return routers().flatMap((router) =>
    router.stack.flatMap((layer) =>
      layer.methods
        .filter((m) => m !== 'HEAD')
        .map((m) => ({ key: `${m} ${openApiPath(String(layer.path))}`, params: layer.paramNames.map((p) => String(p.name)) })),
    ),
  );
}

function resolve<T>(item: T | Reference): T {
  if (typeof item !== 'object' || item === null || !('$ref' in item)) return item as T;
  const [, section, name] = /^#\/components\/(\w+)\/(.+)$/.exec(item.$ref) ?? [];
  const found = (doc.components as unknown as Record<string, Record<string, unknown>>)[section!]?.[name!];
  if (found === undefined) throw new Error(`unresolved ${item.$ref}`);
  return found as T;
}

function operations(): Array<{ key: string; path: string; method: Method; op: Operation; params: Parameter[] }> {
  return Object.entries(doc.paths).flatMap(([p, item]) =>
    METHODS.filter((m) => item[m]).map((m) => {
      const op = item[m]!;
      const params = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((x) => resolve<Parameter>(x));
      return { key: `${m.toUpperCase()} ${p}`, path: p, method: m, op, params };
    }),
  );
}

describe('the OpenAPI document and the code agree', () => {
  test('on the routes: every route the routers register is documented, and nothing else', () => {
    const code = new Set(codeRoutes().map((r) => r.key));
    const documented = new Set(operations().filter((o) => o.method !== 'head').map((o) => o.key));
    expect({ onlyInCode: [...code].filter((k) => !documented.has(k)), onlyInDocument: [...documented].filter((k) => !code.has(k)) }).toEqual({ onlyInCode: [], onlyInDocument: [] });
    // HEAD is answered by the router for every GET route; the document names it where it means something.
    for (const o of operations().filter((x) => x.method === 'head')) expect(code.has(`GET ${o.path}`)).toBe(true);
  });

  test('on the path parameters of each route', () => {
    const byKey = new Map(operations().map((o) => [o.key, o]));
    for (const route of codeRoutes()) {
      const params = byKey.get(route.key)!.params.filter((p) => p.in === 'path');
      expect({ route: route.key, params: params.map((p) => p.name).sort() }).toEqual({ route: route.key, params: [...route.params].sort() });
      for (const p of params) expect({ route: route.key, name: p.name, required: p.required }).toEqual({ route: route.key, name: p.name, required: true });
    }
  });

  test('on the query parameters: the admin routes’ schemas, and the URL parameters the v3 interface reads itself', () => {
    const queryOf = (key: string) => operations().find((o) => o.key === key)!.params.filter((p) => p.in === 'query').map((p) => p.name).sort();
    const schemas = {
      'GET /admin/api/trackers/{id}/requests': RequestQuery,
      'GET /admin/api/requests/unknown-token': RequestQuery,
      'GET /admin/api/trackers/{id}/destinations/{dest}/dead-letters': DeadLetterQuery,
      // Read by hand in src/admin/tracker-routes.ts: ?property=<name or JSON pointer>.
      'DELETE /admin/api/trackers/{id}/privacy-rules': { shape: { property: true } },
      'GET /admin/api/audit': AuditQuerySchema,
      'GET /admin/api/trackers/{id}/audit': AuditQuerySchema,
      'GET /admin/api/audit/export': { shape: { since: true } },
    };
    for (const [key, schema] of Object.entries(schemas)) expect({ key, query: queryOf(key) }).toEqual({ key, query: Object.keys(schema.shape).sort() });
    // Every admin route that reads its query string is in the list above.
    const adminDir = path.join(__dirname, '../../src/admin');
    const reads = readdirSync(adminDir).reduce((n, f) => n + (readFileSync(path.join(adminDir, f), 'utf8').match(/ctx\.(query|querystring)\b/g)?.length ?? 0), 0);
    expect(reads).toBe(Object.keys(schemas).length);
    for (const o of operations().filter((x) => x.path.startsWith('/admin/') && !(x.key in schemas))) expect({ key: o.key, query: o.params.filter((p) => p.in === 'query') }).toEqual({ key: o.key, query: [] });

    const v3 = operations().filter((o) => /^\/v3\/(user|session|event)/.test(o.path) && o.method !== 'head');
    expect(v3).toHaveLength(12);
    // `fields` stands for every other parameter: the record's own fields.
    for (const o of v3) expect({ key: o.key, query: queryOf(o.key) }).toEqual({ key: o.key, query: [...Object.values(URL_PARAMETERS), 'fields'].sort() });
  });

  test('on the error codes: the same codes as src/core/errors.ts, each under its own status', () => {
    expect([...ERROR_CODE_ENUM].sort()).toEqual(Object.keys(ERROR_CODES).sort());
    const listed = new Set<string>();
    for (const [name, response] of Object.entries(RESPONSES)) {
      for (const code of response['x-error-codes'] ?? []) {
        listed.add(code);
        expect({ name, code, status: STATUS_OF[name as keyof typeof RESPONSES] }).toEqual({ name, code, status: ERROR_CODES[code as keyof typeof ERROR_CODES]?.status });
      }
    }
    expect([...listed].sort()).toEqual(Object.keys(ERROR_CODES).sort());
    // Every error answer is used by some operation, under its own status.
    const used = new Set<string>();
    for (const { key, op } of operations()) {
      for (const [status, response] of Object.entries(op.responses)) {
        if (!('$ref' in response)) continue;
        const name = response.$ref.replace('#/components/responses/', '') as keyof typeof RESPONSES;
        expect({ key, status }).toEqual({ key, status: String(STATUS_OF[name]) });
        used.add(name);
      }
    }
    expect(Object.keys(RESPONSES).filter((n) => !used.has(n))).toEqual([]);
  });
});

describe('the /v1 paths (Segment’s HTTP API)', () => {
  const v1 = () => operations().filter((o) => o.path.startsWith(`${SEGMENT_PREFIX}/`));

  test('document every batch and single-call path the router takes, as POST', () => {
    const posts = new Set(v1().filter((o) => o.method === 'post').map((o) => o.path));
    for (const p of [...SEGMENT_BATCH_PATHS, ...Object.keys(SEGMENT_SINGLE_PATHS)]) expect({ path: `${SEGMENT_PREFIX}${p}`, documented: posts.has(`${SEGMENT_PREFIX}${p}`) }).toEqual({ path: `${SEGMENT_PREFIX}${p}`, documented: true });
    expect(posts.has(`${SEGMENT_PREFIX}/import/`)).toBe(true);
    expect(v1().map((o) => o.key)).toEqual(expect.arrayContaining([`POST ${SEGMENT_PREFIX}/m`, `GET ${SEGMENT_PREFIX}/projects/{writeKey}/settings`]));
  });

  test('answer 200 with a JSON body, and errors in the body Segment’s SDKs read, 429 and 503 with Retry-After', () => {
    const segmentError = resolve<{ required: string[] }>({ $ref: '#/components/schemas/SegmentErrorAnswer' });
    expect(segmentError.required).toEqual(expect.arrayContaining(['success', 'code', 'message', 'error']));
    for (const { key, op, path: p } of v1()) {
      expect({ key, json: resolve<Response>(op.responses['200']!).content?.['application/json'] !== undefined }).toEqual({ key, json: true });
      for (const [status, answer] of Object.entries(op.responses)) {
        if (status === '200') continue;
        const response = resolve<Response>(answer);
        const schema = (response.content?.['application/json']?.schema as Reference).$ref;
        // Only the HTTP server's own refusals, before any route, keep v3's body.
        const expected = status === '408' || status === '431' ? '#/components/schemas/ErrorAnswer' : '#/components/schemas/SegmentErrorAnswer';
        expect({ key, status, schema }).toEqual({ key, status, schema: expected });
        if (status === '429' || status === '503') expect({ key, status, retryAfter: response.headers?.['Retry-After'] !== undefined }).toEqual({ key, status, retryAfter: true });
      }
      if (op.requestBody) {
        for (const status of ['400', '401', '403', '413', '415', '429', '503']) expect({ key, status, answered: status in op.responses }).toEqual({ key, status, answered: true });
        expect(op.security).toEqual([{ segmentBasic: [] }, { trackerHeader: [] }, {}]);
        expect(p).not.toMatch(/\{/);
      }
    }
    expect(doc.components.securitySchemes.segmentBasic).toMatchObject({ type: 'http', scheme: 'basic' });
  });
});

describe('the document', () => {
  test('is valid OpenAPI 3.1 by the specification’s own JSON Schema', () => {
    const out = execFileSync(process.execPath, [path.join(__dirname, '../helpers/validate-openapi.mjs')], { input: JSON.stringify(doc), encoding: 'utf8', timeout: 30_000 });
    expect(JSON.parse(out)).toEqual({ valid: true, version: '3.1', errors: [] });
  });

  test('is well formed: unique operation ids, every $ref resolves, every operation answers something', () => {
    const ids = operations().map((o) => o.op.operationId);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
    expect(ids.every((id) => /^[a-z][A-Za-z]+$/.test(id))).toBe(true);
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(50);
    for (const r of refs) expect(() => resolve({ $ref: r })).not.toThrow();
    for (const { key, op } of operations()) expect({ key, answers: Object.keys(op.responses).length > 0 }).toEqual({ key, answers: true });
    // The three ways to pass a tracker token are all stated.
    expect(doc.components.securitySchemes).toMatchObject({ trackerHeader: { in: 'header', name: 'Authorization' }, trackerQuery: { in: 'query', name: '_token' } });
    expect(JSON.stringify(resolve({ $ref: '#/components/schemas/Record' }))).toContain('_token');
  });
});

describe(`GET ${OPENAPI_PATH}`, () => {
  const admin = useAdminApi();

  test('is served without authentication, and is the document', async () => {
    const res = await admin.api.http.get(OPENAPI_PATH);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual(JSON.parse(JSON.stringify(doc)));
    expect((await admin.api.http.post(OPENAPI_PATH)).body.error.code).toBe('ERR_METHOD_NOT_ALLOWED');
  });
});
