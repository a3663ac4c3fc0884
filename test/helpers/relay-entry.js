'use strict';
// The relay as the tests run it (test/helpers/entries.ts): the bundle test/global-setup.ts made,
// dist/test/relay.js, run with its V8 code cache beside it (bin/run-bundle.js), which the first
// relay of a run that exits cleanly writes.
const path = require('node:path');
const { runBundle } = require('../../bin/run-bundle');

const dir = path.join(__dirname, '..', '..', 'dist', 'test');
runBundle(path.join(dir, 'relay.js'), path.join(dir, 'relay.cache'), 'the relay is not bundled yet: run jest, whose global setup (test/global-setup.ts) bundles it');
