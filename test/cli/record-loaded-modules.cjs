'use strict';
// Preloaded (--require) into a CLI process by startup.test.ts: at exit, writes the file of
// every module the process loaded through require to $LOADED_MODULES_FILE, one a line.
const fs = require('node:fs');
process.on('exit', () => {
  fs.writeFileSync(process.env.LOADED_MODULES_FILE, Object.keys(require.cache).join('\n'));
});
