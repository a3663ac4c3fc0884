import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { WRITE_CHILD } from './helpers/entries';

const ROOT = path.join(__dirname, '..');

/**
 * Builds what the tests run as processes, from the sources as they are now: the relay's bundle
 * (run by test/helpers/relay-entry.js), a connector writer's (test/helpers/entries.ts) and the
 * CLI's (`npm run build:cli`). A few seconds, once per run.
 */
export default async function globalSetup(): Promise<void> {
  const outdir = path.dirname(WRITE_CHILD);
  // The relay with the packages it loads (but those below): resolving and reading
  // ~1 100 files one by one was half of what a relay's start cost. Named by a build id, for its
  // code cache (bin/run-bundle.js); the previous build's cache goes with the old bundle.
  rmSync(path.join(outdir, 'relay.cache'), { force: true });
  // The relay and the entry of its delivery thread (src/boot/delivery-thread.ts looks for it beside the relay).
  await build({
    entryPoints: { relay: path.join(ROOT, 'src', 'boot', 'server.ts'), 'delivery-thread-main': path.join(ROOT, 'src', 'boot', 'delivery-thread-main.ts') },
    outdir,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    // Outside the bundle: DuckDB's native binding, which only loads from its file, and the packages
    // published as ES modules only (jest.config.js lists them), which the relay loads with Node's
    // require() of an ES module in production: the tests keep exercising that path.
    external: ['@duckdb/node-bindings', '@duckdb/node-bindings-*', '@marcbachmann/cel-js'],
    banner: { js: `// tributary-relay build ${randomUUID().replaceAll('-', '')}` },
    // Without comments: a smaller file to read and parse. Names stay, for stacks.
    minifyWhitespace: true,
    legalComments: 'none',
    sourcemap: 'linked',
    sourcesContent: false,
    logLevel: 'error',
  });
  await build({
    entryPoints: { [path.basename(WRITE_CHILD, '.js')]: path.join(ROOT, 'test', 'connectors', 'fixtures', 'write-child.ts') },
    outdir,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    packages: 'external',
    sourcemap: true,
    logLevel: 'warning',
  });
  execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'build-cli.js')], { cwd: ROOT, stdio: 'inherit' });
}
