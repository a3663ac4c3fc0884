import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');

/**
 * The relay as the tests run it: src/boot/server.ts bundled into one file with the packages it
 * loads (test/global-setup.ts), run with a V8 code cache by test/helpers/relay-entry.js, so it is
 * never older than the sources. The tests start the relay a few hundred times: with our code
 * bundled and the packages loaded from node_modules a start cost 1.3–1.5 s of CPU, with the
 * packages bundled too 0.86–0.9 s, and with the code cache 0.6–0.68 s (docs/development.md).
 */
export const SERVER = path.join(ROOT, 'test', 'helpers', 'relay-entry.js');

/**
 * test/connectors/fixtures/write-child.ts bundled the same way: a Google connector writing in a
 * process of its own, with its client libraries as in production.
 */
export const WRITE_CHILD = path.join(ROOT, 'dist', 'test', 'write-child.js');

/** The CLI as users run it: bin/tributary.js over dist/cli, rebuilt by test/global-setup.ts too. */
export const CLI = path.join(ROOT, 'bin', 'tributary.js');
