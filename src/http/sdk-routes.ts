import Router from '@koa/router';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Context } from 'koa';
import { ApiError } from '../core/errors';
import { readIfExists } from '../core/files';
import { parseSdkManifest, sdkDir, type SdkManifest } from '../core/sdk-manifest';

export interface BuiltSdk {
  manifest: SdkManifest;
  code: Buffer;
  gzipped: Buffer;
}

/** The current script's path; a browser may cache it for an hour, so a new version reaches sites within that. */
export const SDK_PATH = '/sdk.js';
const CURRENT_CACHE = 'public, max-age=3600';
const PINNED_CACHE = 'public, max-age=31536000, immutable';

/** The built SDK (dist/sdk), or undefined when it was not built. */
export async function readBuiltSdk(dir = sdkDir()): Promise<BuiltSdk | undefined> {
  const [code, manifest] = await Promise.all([readIfExists(path.join(dir, 'sdk.js')), readIfExists(path.join(dir, 'sdk.json'))]);
  if (code === undefined || manifest === undefined) return undefined;
  return { code, gzipped: gzipSync(code, { level: 9 }), manifest: parseSdkManifest(manifest.toString('utf8')) };
}

function serve(ctx: Context, sdk: BuiltSdk, cacheControl: string): void {
  ctx.set('Cache-Control', cacheControl);
  ctx.set('X-Content-Type-Options', 'nosniff');
  // Sites that isolate themselves (Cross-Origin-Embedder-Policy) may still load it.
  ctx.set('Cross-Origin-Resource-Policy', 'cross-origin');
  ctx.vary('Accept-Encoding');
  ctx.type = 'text/javascript; charset=utf-8';
  ctx.etag = `"${sdk.manifest.hash}"`;
  ctx.status = 200;
  if (ctx.fresh) {
    ctx.status = 304;
    return;
  }
  // Served compressed by us: the relay has no compression middleware, and 3–4 KB instead of 9 is the point.
  if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
    ctx.set('Content-Encoding', 'gzip');
    ctx.body = sdk.gzipped;
  } else {
    ctx.body = sdk.code;
  }
}

/**
 * `GET /sdk.js` (the current browser SDK, src/sdk) and `GET /sdk.<hash>.js` (that version only,
 * cacheable for ever; any other hash is a 404 naming the current one). Read once, when first asked
 * for: a rebuild shows after a restart.
 */
export function createSdkRouter(load: () => Promise<BuiltSdk | undefined> = readBuiltSdk): Router {
  const router = new Router();
  let built: Promise<BuiltSdk | undefined> | undefined;
  const sdk = async (): Promise<BuiltSdk> => {
    built ??= load();
    const found = await built;
    if (found === undefined) {
      built = undefined;
      throw new ApiError('ERR_SDK_NOT_BUILT');
    }
    return found;
  };
  router.get(SDK_PATH, async (ctx) => serve(ctx, await sdk(), CURRENT_CACHE));
  router.get('/sdk.:hash.js', async (ctx) => {
    const current = await sdk();
    if (ctx.params.hash !== current.manifest.hash) throw new ApiError('ERR_NOT_FOUND', `No SDK version ${ctx.params.hash}: this relay serves /sdk.${current.manifest.hash}.js (and the current one at ${SDK_PATH}).`);
    serve(ctx, current, PINNED_CACHE);
  });
  return router;
}
