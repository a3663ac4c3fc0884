import Router from '@koa/router';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Context } from 'koa';
import { ApiError } from '../core/errors';
import { packageRoot, readIfExists } from '../core/files';

const TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/** Flat names only: no separators, no leading dot, so no path can leave the asset folders. */
const ASSET_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

/**
 * The browser resolves the bare imports of Preact and uPlot (the charts) through the page's import
 * map to these files; uPlot's stylesheet is linked by the page.
 */
const VENDOR: Readonly<Record<string, string>> = {
  'preact.mjs': 'preact',
  'hooks.mjs': 'preact/hooks',
  'jsx-runtime.mjs': 'preact/jsx-runtime',
  'uplot.mjs': 'uplot/dist/uPlot.esm.js',
  'uplot.css': 'uplot/dist/uPlot.min.css',
};

const IMPORT_MAP = /<script type="importmap">([\s\S]*?)<\/script>/;

/** Only the page's own files run; the one inline script allowed is the import map, by its hash. */
function contentSecurityPolicy(html: string): string {
  const importMap = IMPORT_MAP.exec(html)?.[1];
  const scriptHash = importMap === undefined ? '' : ` 'sha256-${createHash('sha256').update(importMap).digest('base64')}'`;
  return [
    "default-src 'self'",
    `script-src 'self'${scriptHash}`,
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function send(ctx: Context, body: Buffer | string, type: string): void {
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  // Revalidated on every load, so a new version shows at once; unchanged files answer 304.
  ctx.set('Cache-Control', 'no-cache');
  ctx.type = type;
  ctx.etag = `"${createHash('sha1').update(body).digest('base64url')}"`;
  ctx.status = 200;
  if (ctx.fresh) {
    ctx.status = 304;
    return;
  }
  ctx.body = body;
}

/**
 * The console's files: the page, its compiled modules (dist/console, `npm run build:console`),
 * its stylesheet (src/console/public), and Preact and uPlot from node_modules. Files are read on each
 * request: an admin loads a handful, and a rebuild shows without a restart.
 */
export function createConsoleRouter(root = packageRoot()): Router {
  const publicDir = path.join(root, 'src', 'console', 'public');
  const builtDir = path.join(root, 'dist', 'console');
  const router = new Router({ prefix: '/admin' });

  router.get('/', async (ctx) => {
    const [page, main] = await Promise.all([readIfExists(path.join(publicDir, 'index.html')), readIfExists(path.join(builtDir, 'main.js'))]);
    if (page === undefined || main === undefined) throw new ApiError('ERR_CONSOLE_NOT_BUILT');
    const html = page.toString('utf8');
    ctx.set('Content-Security-Policy', contentSecurityPolicy(html));
    ctx.set('X-Frame-Options', 'DENY');
    send(ctx, html, 'text/html; charset=utf-8');
  });

  router.get('/assets/:name', async (ctx) => {
    const name = ctx.params.name!;
    const type = TYPES[path.extname(name)];
    if (!ASSET_NAME.test(name) || type === undefined) throw new ApiError('ERR_NOT_FOUND', `No console file ${name}.`);
    const body = (await readIfExists(path.join(builtDir, name))) ?? (await readIfExists(path.join(publicDir, name)));
    if (body === undefined) throw new ApiError('ERR_NOT_FOUND', `No console file ${name}.`);
    send(ctx, body, type);
  });

  router.get('/vendor/:name', async (ctx) => {
    const specifier = VENDOR[ctx.params.name!];
    if (specifier === undefined) throw new ApiError('ERR_NOT_FOUND', `No console file ${ctx.params.name}.`);
    send(ctx, await readFile(require.resolve(specifier)), TYPES[path.extname(ctx.params.name!)]!);
  });
  return router;
}
