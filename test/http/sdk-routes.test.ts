import Koa from 'koa';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import request from 'supertest';
import { createErrorHandler } from '../../src/http/error-handler';
import { createSdkRouter, readBuiltSdk } from '../../src/http/sdk-routes';
import { sdkDir, type SdkManifest } from '../../src/core/sdk-manifest';
import { createLogger } from '../../src/core/logger';
import { createMetrics } from '../../src/core/metrics';

/** The browser SDK as the relay serves it (src/http/sdk-routes.ts), from what `npm run build:sdk` wrote. */

const BUILT = sdkDir();
const manifest = JSON.parse(readFileSync(path.join(BUILT, 'sdk.json'), 'utf8')) as SdkManifest;
const code = readFileSync(path.join(BUILT, 'sdk.js'));

function appServing(dir = BUILT): Koa {
  const app = new Koa();
  app.use(createErrorHandler(createLogger('silent'), createMetrics(false)));
  const router = createSdkRouter(() => readBuiltSdk(dir));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

test('the built SDK is at most 6 KB gzipped, and its manifest says what it is', () => {
  expect(gzipSync(code, { level: 9 }).length).toBeLessThanOrEqual(6 * 1024);
  expect(manifest.gzipBytes).toBe(gzipSync(code, { level: 9 }).length);
  expect(manifest.bytes).toBe(code.length);
  expect(manifest.hash).toMatch(/^[0-9a-f]{16}$/);
  expect(manifest.integrity).toMatch(/^sha384-[A-Za-z0-9+/]{64}$/);
});

test('/sdk.js is the current script, gzipped when accepted, cacheable for an hour, revalidated by its ETag', async () => {
  const app = appServing().callback();
  const zipped = await request(app).get('/sdk.js').set('Accept-Encoding', 'gzip');
  expect(zipped.status).toBe(200);
  expect(zipped.headers['content-type']).toBe('text/javascript; charset=utf-8');
  expect(zipped.headers['content-encoding']).toBe('gzip');
  expect(zipped.headers['cache-control']).toBe('public, max-age=3600');
  expect(zipped.headers.vary).toContain('Accept-Encoding');
  expect(zipped.headers['cross-origin-resource-policy']).toBe('cross-origin');
  // supertest decodes the body: what came over the wire is told by its length.
  expect(zipped.headers['content-length']).toBe(String(manifest.gzipBytes));
  expect(zipped.text).toBe(code.toString('utf8'));

  const plain = await request(app).get('/sdk.js').set('Accept-Encoding', 'identity');
  expect(plain.headers['content-encoding']).toBeUndefined();
  expect(plain.text).toBe(code.toString('utf8'));

  const again = await request(app).get('/sdk.js').set('If-None-Match', zipped.headers.etag!);
  expect(again.status).toBe(304);
});

test('/sdk.<hash>.js is that version for ever; another hash is a 404 naming the current one', async () => {
  const app = appServing().callback();
  const pinned = await request(app).get(`/sdk.${manifest.hash}.js`).set('Accept-Encoding', 'identity');
  expect(pinned.status).toBe(200);
  expect(pinned.headers['cache-control']).toBe('public, max-age=31536000, immutable');
  expect(pinned.text).toBe(code.toString('utf8'));

  const other = await request(app).get('/sdk.0123456789abcdef.js');
  expect(other.status).toBe(404);
  expect(other.body.error.code).toBe('ERR_NOT_FOUND');
  expect(other.body.error.message).toContain(`/sdk.${manifest.hash}.js`);
});

test('without a built SDK the paths answer 503 ERR_SDK_NOT_BUILT, and serve it once it is built', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'sdk-routes-'));
  try {
    const app = appServing(dir).callback();
    const missing = await request(app).get('/sdk.js');
    expect(missing.status).toBe(503);
    expect(missing.body.error.code).toBe('ERR_SDK_NOT_BUILT');
    writeFileSync(path.join(dir, 'sdk.js'), code);
    writeFileSync(path.join(dir, 'sdk.json'), JSON.stringify(manifest));
    expect((await request(app).get('/sdk.js')).status).toBe(200);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
