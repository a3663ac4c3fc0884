'use strict';
// Runs a bundled script (one file made by esbuild) with a V8 code cache beside it: V8 then
// deserialises the functions an earlier run compiled instead of parsing and compiling them again.
// What starts the CLI (bin/tributary.js over dist/cli) and the relay the tests run
// (test/helpers/entries.ts over dist/test).
//
// The cache starts with a 64-byte line: the build it was made for (the bundle's first line,
// `// tributary-<name> build <id>`, names it) and `seed` or `full`. A build may seed it; the first
// run that uses no cache or a seed writes it again at exit, `full`, with the functions that run
// compiled lazily too. A cache for another build is ignored, as V8 itself only checks the source's
// length. V8 rejects a cache made by another V8 version or with other V8 flags; the bundle is then
// compiled from source, as without a cache, and the cache is written again at exit.
//
// Written beside the bundle only, with the bundle's owner and permissions: a code cache is code,
// so never one from a shared directory such as the system's temporary one. Where that directory
// is read-only the bundle runs as before, only without the benefit of a newer cache.
const fs = require('node:fs');
const Module = require('node:module');
const path = require('node:path');
const vm = require('node:vm');

const HEADER_BYTES = 64;
// NODE_DEBUG=tributary tells what became of the cache.
const debug = require('node:util').debuglog('tributary');

/**
 * Runs `bundle` as require would (a module of its own, whose packages left outside the bundle
 * resolve from node_modules), compiled with the code cache `cacheFile`. `notBuilt`: the message
 * when the bundle is missing (exit 1). `encoding`: `latin1` for a bundle its build checked to be
 * ASCII (read exactly, and faster than as UTF-8), else `utf8`.
 */
function runBundle(bundle, cacheFile, notBuilt, encoding = 'utf8') {
  const dir = path.dirname(bundle);
  let source;
  try {
    source = fs.readFileSync(bundle, encoding);
  } catch (err) {
    if (err.code !== 'ENOENT') throw err;
    process.stderr.write(notBuilt + '\n');
    process.exit(1);
  }
  // Set by the build; without it (a bundle made some other way) no cache is read or written.
  const build = /^\/\/ tributary-\S+ build (\S+)/.exec(source)?.[1];

  let cachedData;
  let seeded = false;
  try {
    if (build === undefined) throw new Error('no build id');
    const file = fs.readFileSync(cacheFile);
    const [forBuild, kind] = file.toString('latin1', 0, HEADER_BYTES).trim().split(' ');
    if (forBuild === build) {
      cachedData = file.subarray(HEADER_BYTES);
      seeded = kind === 'seed';
    }
  } catch {
    // No cache yet: compiled from source below, and one is written at exit.
  }

  const script = new vm.Script(Module.wrap(source), {
    filename: bundle,
    cachedData,
    // An `import()` in the bundle resolves as in a module loaded by require, not refused.
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const used = cachedData !== undefined && !script.cachedDataRejected;
  debug('code cache %s', used ? (seeded ? 'used (seed)' : 'used') : cachedData ? 'rejected' : 'absent');

  // Not on a run with flags of its own (`node --inspect`, `--trace-gc`…): V8 may count them in its
  // check, and a cache this run wrote would then be refused by the plain runs that follow.
  if ((!used || seeded) && build !== undefined && process.execArgv.length === 0) {
    // At exit, so that the cache also holds the functions this run compiled lazily.
    process.once('exit', () => {
      const partial = `${cacheFile}.${process.pid}.tmp`;
      let fd;
      try {
        // Opened before the cache is made, so that a read-only directory costs no more than this.
        fd = fs.openSync(partial, 'w');
        fs.writeSync(fd, `${build} full`.padEnd(HEADER_BYTES - 1) + '\n', null, 'latin1');
        fs.writeSync(fd, script.createCachedData());
        fs.closeSync(fd);
        fd = undefined;
        // A rename, so that a CLI starting meanwhile reads the old cache or the new one, never half of one.
        fs.renameSync(partial, cacheFile);
        debug('code cache written');
      } catch (err) {
        if (fd !== undefined) fs.closeSync(fd);
        fs.rmSync(partial, { force: true });
        debug('code cache not written: %s', err.message);
      }
    });
  }

  // Run as require would run it: a module of its own, registered under its file name, that resolves
  // the packages left outside the bundle from node_modules.
  const mod = new Module(bundle, module);
  mod.filename = bundle;
  mod.paths = Module._nodeModulePaths(dir);
  Module._cache[bundle] = mod;
  script.runInThisContext()(mod.exports, Module.createRequire(bundle), mod, bundle, dir);
  mod.loaded = true;
}

module.exports = { runBundle };
