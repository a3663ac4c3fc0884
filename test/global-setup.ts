import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { build } from 'esbuild';
import { SERVER, WRITE_CHILD } from './helpers/entries';

const ROOT = path.join(__dirname, '..');

/**
 * Builds what the tests run as processes, from the sources as they are now: the relay's and a
 * connector writer's bundles (test/helpers/entries.ts) and the CLI's (`npm run build:cli`). About
 * two seconds, once per run.
 */
export default async function globalSetup(): Promise<void> {
  const outdir = path.dirname(SERVER);
  await build({
    entryPoints: {
      [path.basename(SERVER, '.js')]: path.join(ROOT, 'src', 'boot', 'server.ts'),
      [path.basename(WRITE_CHILD, '.js')]: path.join(ROOT, 'test', 'connectors', 'fixtures', 'write-child.ts'),
    },
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
