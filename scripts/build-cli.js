#!/usr/bin/env node
'use strict';
/**
 * `npm run build:cli`: the CLI as one file, dist/cli/tributary.js, that bin/tributary.js loads with
 * a V8 code cache, dist/cli/tributary.cache, seeded here by one run of `--help` (see the header of
 * bin/tributary.js for the cache's format and life).
 *
 * Why one file: loading the CLI's ~250 modules one by one cost more time in resolving, reading
 * and compiling them than in running them; one script is read once and, with the cache, compiled
 * by deserialising. From src/, not from tsc's output: esbuild reads the TypeScript as tsx does for
 * the CLI tests, sees zod's ES modules (of which it keeps what we use), and needs no tsc first, so
 * `npm test` builds it in a second.
 *
 * The connectors' libraries stay outside the bundle and load from node_modules, as before, only
 * when a command reaches a destination: they are large, DuckDB is a native addon, and the Google
 * clients resolve files at run time. Only the packages a command that reads Redis alone needs
 * (commander, ioredis, zod, pino, luxon and what they import) go in; everything else is external,
 * so a dependency added later is never bundled by accident.
 */
const { execFileSync } = require('node:child_process');
const { randomUUID } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const esbuild = require('esbuild');

const ROOT = path.join(__dirname, '..');
const OUT_DIR = path.join(ROOT, 'dist', 'cli');
const BUNDLE = path.join(OUT_DIR, 'tributary.js');
const CACHE = path.join(OUT_DIR, 'tributary.cache');
/** bin/tributary.js: the first line of the cache. */
const CACHE_HEADER_BYTES = 64;

/** The packages our own code imports that go in the bundle; their own imports go in with them. */
const BUNDLED = new Set(['commander', 'ioredis', 'zod', 'pino', 'luxon', 'lossless-json', 'cluster-key-slot']);

function packageName(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** Keeps a bare import of our code external unless its package is in BUNDLED; node: builtins are always external. */
const externalUnlessBundled = {
  name: 'external-unless-bundled',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.importer.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      if (BUNDLED.has(packageName(args.path))) return undefined;
      return { path: args.path, external: true };
    });
  },
};

/**
 * ioredis adds its ~600 command methods to `Commander.prototype` one at a time as its module loads.
 * V8 keeps a class's prototype in fast mode and, for a prototype, copies the whole descriptor array
 * on each addition: that loop took 30–45 ms here, against about 1 ms once the object is in
 * dictionary mode, where adding then deleting one property puts it. The bundle's copy of that module
 * gets those two statements before the loop; the methods, their order and attributes are the same.
 * Should ioredis change that code, the build says so and bundles it as it is.
 */
const IOREDIS_COMMANDER = /[\\/]node_modules[\\/]ioredis[\\/]built[\\/]utils[\\/]Commander\.js$/;
const COMMANDS_LOOP = 'const commands = commands_1.list.filter(';
const dictionaryModeForIoredisCommands = {
  name: 'dictionary-mode-for-ioredis-commands',
  setup(build) {
    build.onLoad({ filter: IOREDIS_COMMANDER }, async (args) => {
      const code = await fs.promises.readFile(args.path, 'utf8');
      if (code.split(COMMANDS_LOOP).length !== 2) {
        return { contents: code, loader: 'js', warnings: [{ text: `ioredis changed: no single \`${COMMANDS_LOOP}\` in ${args.path}; its commands load the slow way` }] };
      }
      const toDictionaryMode = 'Commander.prototype.__dictionaryMode = 0; delete Commander.prototype.__dictionaryMode;\n';
      return { contents: code.replace(COMMANDS_LOOP, toDictionaryMode + COMMANDS_LOOP), loader: 'js' };
    });
  },
};

async function main() {
  // Also removes the cache of the previous build.
  fs.rmSync(OUT_DIR, { recursive: true, force: true });
  // Names this build, for the code cache: V8 would take a cache made for another bundle of the same length.
  const build = randomUUID().replaceAll('-', '');
  const result = await esbuild.build({
    entryPoints: [path.join(ROOT, 'src', 'cli', 'main.ts')],
    outfile: BUNDLE,
    tsconfig: path.join(ROOT, 'tsconfig.build.json'),
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    // Minified: every page of memory the file and its string take costs time (a page fault is ~12 µs
    // on the 2 vCPU VMs measured), and 1.4 MB took ~9 ms to read. keepNames: bundling renames
    // clashing classes and functions, and code reads `.name` (redis-errors' and ioredis' errors name
    // themselves after their class, which describeFailure in src/cli/failure.ts reads).
    minify: true,
    keepNames: true,
    // Stack traces point into src/ under `node --enable-source-maps`; the map costs nothing otherwise.
    sourcemap: 'linked',
    sourcesContent: false,
    legalComments: 'none',
    banner: { js: `// tributary-cli build ${build}` },
    plugins: [externalUnlessBundled, dictionaryModeForIoredisCommands],
    logLevel: 'warning',
    metafile: true,
  });
  // bin/tributary.js reads the bundle as latin1, exact only while every byte is ASCII (esbuild's
  // default charset escapes the rest).
  const nonAscii = fs.readFileSync(BUNDLE).findIndex((byte) => byte > 0x7f);
  if (nonAscii !== -1) throw new Error(`${BUNDLE} has a non-ASCII byte at offset ${nonAscii}`);
  const bundled = new Set();
  for (const input of Object.keys(result.metafile.inputs)) {
    const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (match) bundled.add(match[1]);
  }
  // One run writes the code cache (see bin/tributary.js) with the functions it compiled: all the
  // modules' top levels and commander's. Marked `seed`, so that the first real command replaces it.
  execFileSync(process.execPath, [path.join(ROOT, 'bin', 'tributary.js'), '--help'], { stdio: 'ignore' });
  const cache = fs.readFileSync(CACHE);
  if (!cache.toString('latin1', 0, CACHE_HEADER_BYTES).startsWith(`${build} full`)) throw new Error(`no code cache written at ${CACHE}`);
  cache.write(`${build} seed`.padEnd(CACHE_HEADER_BYTES - 1), 0, 'latin1');
  fs.writeFileSync(CACHE, cache);
  const kb = (file) => `${Math.round(fs.statSync(file).size / 1024)} KB`;
  process.stdout.write(`build:cli: ${path.relative(ROOT, BUNDLE)} (${kb(BUNDLE)}, packages: ${[...bundled].sort().join(', ')}), code cache ${kb(CACHE)}\n`);
}

main().catch((err) => {
  process.stderr.write(`build:cli: ${err.stack ?? err}\n`);
  process.exit(1);
});
