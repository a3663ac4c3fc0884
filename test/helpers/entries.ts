import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');

/**
 * The relay as the tests run it in processes: src/boot/server.ts bundled into one file (our code;
 * packages still load from node_modules) by test/global-setup.ts at the start of every jest run,
 * so it is never older than the sources. One file starts in half the CPU of the sources through
 * tsx, and the tests start the relay a few hundred times.
 */
export const SERVER = path.join(ROOT, 'dist', 'test', 'server.js');

/**
 * test/connectors/fixtures/write-child.ts bundled the same way: a Google connector writing in a
 * process of its own, with its client libraries as in production.
 */
export const WRITE_CHILD = path.join(ROOT, 'dist', 'test', 'write-child.js');

/** The CLI as users run it: bin/tributary.js over dist/cli, rebuilt by test/global-setup.ts too. */
export const CLI = path.join(ROOT, 'bin', 'tributary.js');
