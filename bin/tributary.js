#!/usr/bin/env node
'use strict';
// The CLI is compiled to dist/ by `npm run build` (run by `npm ci` through the prepare script).
const path = require('node:path');
const fs = require('node:fs');
const entry = path.join(__dirname, '..', 'dist', 'src', 'cli', 'main.js');
if (!fs.existsSync(entry)) {
  process.stderr.write('tributary: not built yet; run `npm run build` in ' + path.join(__dirname, '..') + '\n');
  process.exit(1);
}
require(entry);
