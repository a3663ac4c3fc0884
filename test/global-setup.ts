import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { build } from 'esbuild';
import { SERVER } from './helpers/entries';

const ROOT = path.join(__dirname, '..');

/**
 * Builds what the tests run as processes, from the sources as they are now: the relay's bundle
 * (test/helpers/entries.ts) and the CLI's (`npm run build:cli`). About two seconds, once per run.
 */
export default async function globalSetup(): Promise<void> {
  await build({
    entryPoints: [path.join(ROOT, 'src', 'boot', 'server.ts')],
    outfile: SERVER,
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
