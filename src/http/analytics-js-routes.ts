import Router from '@koa/router';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { Context } from 'koa';
import { ApiError } from '../core/errors';
import { readIfExists } from '../core/files';

/**
 * Where `@segment/analytics-next` keeps its browser build: `standalone.js`, what Segment's snippet
 * loads, and the chunks it loads after it (`<name>.bundle.<hash>.js`), each with a `.gz` beside it.
 */
function umdDir(): string {
  return path.join(path.dirname(require.resolve('@segment/analytics-next')), '..', 'umd');
}

const CHUNK = /^[A-Za-z0-9-]+\.bundle\.[0-9a-f]+\.js$/;
/** A write key in a script's URL: a tracker token's characters. */
const WRITE_KEY = /^[A-Za-z0-9._~-]{1,256}$/;
/** The script may change with an upgrade of the package; the chunks are named by their content. */
const SCRIPT_CACHE = 'public, max-age=3600';
const CHUNK_CACHE = 'public, max-age=31536000, immutable';

async function serveFile(ctx: Context, dir: string, name: string, cacheControl: string): Promise<void> {
  const gzip = ctx.acceptsEncodings('gzip', 'identity') === 'gzip';
  const body = (gzip ? await readIfExists(path.join(dir, `${name}.gz`)) : undefined) ?? (await readIfExists(path.join(dir, name)));
  if (body === undefined) throw new ApiError('ERR_NOT_FOUND', `No analytics.js file ${name}: is @segment/analytics-next installed?`);
  ctx.set('Cache-Control', cacheControl);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Cross-Origin-Resource-Policy', 'cross-origin');
  ctx.vary('Accept-Encoding');
  if (gzip && body[0] === 0x1f && body[1] === 0x8b) ctx.set('Content-Encoding', 'gzip');
  ctx.type = 'text/javascript; charset=utf-8';
  ctx.body = body;
}

/**
 * Segment's analytics.js, served from the relay at the paths Segment's CDN uses, so the snippet a
 * site already has works with its host changed and nothing loaded from Segment:
 * - `GET /analytics.js/v1/<writeKey>/analytics.min.js` (and `…/platform/analytics.min.js`): the
 *   script. From an `https://` URL it takes this relay as its CDN (the host before
 *   `/analytics.js/v1/`), so its settings (`/v1/projects/<key>/settings`, which name this relay
 *   as the API host) and its chunks come from here too. The write key is the snippet's own.
 * - `GET /analytics-next/bundles/<chunk>`: the chunks it loads on demand.
 */
export function createAnalyticsJsRouter(dir = umdDir()): Router {
  const router = new Router();
  let chunks: Promise<Set<string>> | undefined;
  const script = async (ctx: Context) => {
    if (!WRITE_KEY.test(ctx.params.writeKey ?? '')) throw new ApiError('ERR_NOT_FOUND', 'No analytics.js for that write key: a tracker token has letters, digits, _ and - only.');
    await serveFile(ctx, dir, 'standalone.js', SCRIPT_CACHE);
  };
  router.get('/analytics.js/v1/:writeKey/analytics.min.js', script);
  router.get('/analytics.js/v1/:writeKey/platform/analytics.min.js', script);
  router.get('/analytics-next/bundles/:file', async (ctx) => {
    const file = ctx.params.file!;
    chunks ??= readdir(dir).then((names) => new Set(names.filter((n) => CHUNK.test(n))), () => new Set<string>());
    if (!CHUNK.test(file) || !(await chunks).has(file)) throw new ApiError('ERR_NOT_FOUND', `No analytics.js chunk ${file}.`);
    await serveFile(ctx, dir, file, CHUNK_CACHE);
  });
  return router;
}
