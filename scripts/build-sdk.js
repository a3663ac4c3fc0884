#!/usr/bin/env node
'use strict';
/**
 * `npm run build:sdk`: the browser SDK (src/sdk) as one minified script, dist/sdk/sdk.js, and
 * dist/sdk/sdk.json with what the relay serves it by: its content hash (the immutable path
 * `/sdk.<hash>.js`), its sizes, and the Subresource Integrity value of a pinned tag. The types are
 * checked first (src/sdk/tsconfig.json: the DOM, ES2017, no Node).
 *
 * ES2018 is the target so that the browsers people still visit sites with (Safari 11.1+, every
 * evergreen one) run it; no dependency is bundled because there is none.
 */
const { execFileSync } = require('node:child_process');
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const zlib = require('node:zlib');
const esbuild = require('esbuild');

const ROOT = path.join(__dirname, '..');
const OUT_DIR = path.join(ROOT, 'dist', 'sdk');
const { version } = require(path.join(ROOT, 'package.json'));

// TypeScript 7's package exports no bin path, so its tsc is found beside its package.json.
const TSC = path.join(path.dirname(require.resolve('typescript/package.json')), 'bin', 'tsc');
execFileSync(process.execPath, [TSC, '-p', path.join(ROOT, 'src', 'sdk', 'tsconfig.json')], { stdio: 'inherit' });
const built = esbuild.buildSync({
  entryPoints: [path.join(ROOT, 'src', 'sdk', 'index.ts')],
  bundle: true,
  minify: true,
  format: 'iife',
  target: 'es2018',
  platform: 'browser',
  define: { SDK_VERSION: JSON.stringify(version) },
  legalComments: 'none',
  write: false,
});
const code = Buffer.from(built.outputFiles[0].text);
const manifest = {
  version,
  hash: createHash('sha256').update(code).digest('hex').slice(0, 16),
  integrity: `sha384-${createHash('sha384').update(code).digest('base64')}`,
  bytes: code.length,
  gzipBytes: zlib.gzipSync(code, { level: 9 }).length,
};
fs.mkdirSync(OUT_DIR, { recursive: true });
fs.writeFileSync(path.join(OUT_DIR, 'sdk.js'), code);
fs.writeFileSync(path.join(OUT_DIR, 'sdk.json'), `${JSON.stringify(manifest, null, 2)}\n`);
console.log(`build:sdk: dist/sdk/sdk.js (${manifest.bytes} bytes, ${manifest.gzipBytes} gzipped), /sdk.${manifest.hash}.js`);
