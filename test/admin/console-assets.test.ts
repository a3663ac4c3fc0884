import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Koa from 'koa';
import supertest from 'supertest';
import { createConsoleRouter } from '../../src/admin/console-assets';
import { createErrorHandler } from '../../src/http/error-handler';
import { createLogger } from '../../src/core/logger';
import { createMetrics } from '../../src/core/metrics';

const IMPORT_MAP = '\n    {"imports": {"preact": "/admin/vendor/preact.mjs", "preact/hooks": "/admin/vendor/hooks.mjs"}}\n  ';
const INDEX_HTML = `<!doctype html>
<html>
<head>
  <script type="importmap">${IMPORT_MAP}</script>
  <link rel="stylesheet" href="/admin/assets/console.css">
</head>
<body><script type="module" src="/admin/assets/main.js"></script></body>
</html>
`;

let root: string;
let http: ReturnType<typeof supertest>;
const publicDir = () => path.join(root, 'src', 'console', 'public');
const builtDir = () => path.join(root, 'dist', 'console');

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'tributary-console-'));
  await mkdir(publicDir(), { recursive: true });
  await mkdir(builtDir(), { recursive: true });
  await writeFile(path.join(publicDir(), 'index.html'), INDEX_HTML);
  await writeFile(path.join(publicDir(), 'console.css'), 'body { margin: 0 }\n');
  await writeFile(path.join(publicDir(), 'notes.txt'), 'not an asset type\n');
  await writeFile(path.join(publicDir(), '.hidden.js'), 'export const hidden = 1;\n');
  await writeFile(path.join(publicDir(), 'shadowed.js'), 'export const from = "public";\n');
  await mkdir(path.join(publicDir(), 'sub'));
  await writeFile(path.join(publicDir(), 'sub', 'nested.js'), 'export const nested = 1;\n');
  await writeFile(path.join(builtDir(), 'main.js'), 'import { render } from "preact";\n');
  await writeFile(path.join(builtDir(), 'shadowed.js'), 'export const from = "dist";\n');
  await writeFile(path.join(root, 'package.json'), '{"name":"secret"}\n');

  const app = new Koa();
  app.silent = true;
  app.use(createErrorHandler(createLogger('silent'), createMetrics(false)));
  const router = createConsoleRouter(root);
  app.use(router.routes());
  app.use(router.allowedMethods());
  http = supertest(app.callback());
});

afterAll(async () => rm(root, { recursive: true, force: true }));

function expectNotFound(res: { status: number; body: { error?: { code?: string } }; headers: Record<string, string> }): void {
  expect(res.status).toBe(404);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.body.error?.code).toBe('ERR_NOT_FOUND');
}

describe('GET /admin/', () => {
  test('serves index.html with a CSP that allows the import map by its hash', async () => {
    const res = await http.get('/admin/');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.text).toBe(INDEX_HTML);
    const hash = createHash('sha256').update(IMPORT_MAP).digest('base64');
    const csp = res.headers['content-security-policy']!;
    const directives = Object.fromEntries(csp.split(';').map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name, values]));
    expect(directives['script-src']).toEqual(["'self'", `'sha256-${hash}'`]);
    expect(directives['frame-ancestors']).toEqual(["'none'"]);
    expect(directives['default-src']).toEqual(["'self'"]);
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers.etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
  });

  test('/admin without the slash serves the page too', async () => {
    const res = await http.get('/admin');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.text).toBe(INDEX_HTML);
  });

  test('a page without an import map allows no inline script', async () => {
    const other = await mkdtemp(path.join(tmpdir(), 'tributary-console-'));
    try {
      await mkdir(path.join(other, 'src', 'console', 'public'), { recursive: true });
      await mkdir(path.join(other, 'dist', 'console'), { recursive: true });
      await writeFile(path.join(other, 'src', 'console', 'public', 'index.html'), '<!doctype html><p>plain</p>');
      await writeFile(path.join(other, 'dist', 'console', 'main.js'), '');
      const app = new Koa();
      app.use(createConsoleRouter(other).routes());
      const res = await supertest(app.callback()).get('/admin/');
      expect(res.status).toBe(200);
      expect(res.headers['content-security-policy']).toContain("script-src 'self';");
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });

  test('If-None-Match with the ETag: 304 without a body', async () => {
    const first = await http.get('/admin/');
    const again = await http.get('/admin/').set('If-None-Match', first.headers.etag!);
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    const stale = await http.get('/admin/').set('If-None-Match', '"something-else"');
    expect(stale.status).toBe(200);
  });
});

describe('GET /admin/assets/:name', () => {
  test('serves compiled modules from dist/console and static files from the public folder', async () => {
    const main = await http.get('/admin/assets/main.js');
    expect(main.status).toBe(200);
    expect(main.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(main.text).toBe('import { render } from "preact";\n');
    const css = await http.get('/admin/assets/console.css');
    expect(css.status).toBe(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(css.text).toBe('body { margin: 0 }\n');
    expect(css.headers['x-content-type-options']).toBe('nosniff');
  });

  test('dist/console wins over the public folder', async () => {
    const res = await http.get('/admin/assets/shadowed.js');
    expect(res.text).toBe('export const from = "dist";\n');
  });

  test('an asset answers 304 to its own ETag', async () => {
    const first = await http.get('/admin/assets/main.js');
    const again = await http.get('/admin/assets/main.js').set('If-None-Match', first.headers.etag!);
    expect(again.status).toBe(304);
  });

  test('traversal, hidden files, unknown extensions, nested and missing files: JSON 404', async () => {
    for (const url of [
      '/admin/assets/..%2Fpackage.json',
      '/admin/assets/..%2F..%2F..%2Fpackage.json',
      '/admin/assets/..%5Cpackage.json',
      '/admin/assets/.hidden.js',
      '/admin/assets/notes.txt',
      '/admin/assets/index.html',
      '/admin/assets/sub/nested.js',
      '/admin/assets/sub%2Fnested.js',
      '/admin/assets/missing.js',
    ]) {
      const res = await http.get(url);
      expectNotFound(res);
      expect(res.text).not.toContain('secret');
    }
  });
});

describe('GET /admin/vendor/:name', () => {
  test('serves Preact, its hooks and its JSX runtime as JavaScript modules', async () => {
    for (const name of ['preact.mjs', 'hooks.mjs', 'jsx-runtime.mjs']) {
      const res = await http.get(`/admin/vendor/${name}`);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
      // ES modules: the browser imports them through the import map.
      expect(res.text).toMatch(/\bexport\s*\{/);
    }
    const hooks = await http.get('/admin/vendor/hooks.mjs');
    expect(hooks.text).toMatch(/from\s*"preact"/);
  });

  test('serves uPlot as an ES module with no import of its own, and its stylesheet', async () => {
    const module = await http.get('/admin/vendor/uplot.mjs');
    expect(module.status).toBe(200);
    expect(module.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(module.text).toMatch(/export\s*\{\s*uPlot as default\s*\}/);
    expect(module.text).not.toMatch(/^\s*import\s/m);
    // Under the page's CSP: no eval, no inline style attribute written as text.
    expect(module.text).not.toMatch(/\beval\(|new Function\(|setAttribute\(\s*["']style|innerHTML/);
    const css = await http.get('/admin/vendor/uplot.css');
    expect(css.status).toBe(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(css.text).toContain('.uplot');
  });

  test('nothing else of node_modules is reachable', async () => {
    for (const url of ['/admin/vendor/react.mjs', '/admin/vendor/..%2Fpackage.json', '/admin/vendor/preact', '/admin/vendor/preact%2Fhooks', '/admin/vendor/uPlot.cjs.js', '/admin/vendor/uplot']) expectNotFound(await http.get(url));
  });
});

test('without dist/console/main.js the page answers 503 ERR_CONSOLE_NOT_BUILT', async () => {
  const main = path.join(builtDir(), 'main.js');
  await unlink(main);
  try {
    const res = await http.get('/admin/');
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('ERR_CONSOLE_NOT_BUILT');
    expect(res.headers['content-security-policy']).toBeUndefined();
  } finally {
    await writeFile(main, 'import { render } from "preact";\n');
  }
  expect((await http.get('/admin/')).status).toBe(200);
});

test('other methods are refused as JSON', async () => {
  const res = await http.post('/admin/assets/main.js');
  expect(res.status).toBe(405);
  expect(res.body.error.code).toBe('ERR_METHOD_NOT_ALLOWED');
});
