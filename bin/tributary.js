#!/usr/bin/env node
'use strict';
// The CLI is one bundled script, dist/cli/tributary.js, made by `npm run build` (run by `npm ci`
// through the prepare script; see scripts/build-cli.js). It runs with a V8 code cache,
// dist/cli/tributary.cache (bin/run-bundle.js): resolving, reading and compiling some 250 modules
// one by one was a large part of what starting the CLI cost. The build seeds the cache with a run
// of `--help`; the first run of a real command writes it again with the functions of connecting
// and talking to Redis too.
const path = require('node:path');
const { runBundle } = require('./run-bundle');

const dir = path.join(__dirname, '..', 'dist', 'cli');
// The bundle is ASCII (scripts/build-cli.js checks): read as latin1.
runBundle(path.join(dir, 'tributary.js'), path.join(dir, 'tributary.cache'), 'tributary: not built yet; run `npm run build` in ' + path.join(__dirname, '..'), 'latin1');
