import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { TrackerStore } from '../../src/core/trackers/store';
import { DEFAULT_KEY_FILE, KeyFileKeyring } from '../../src/core/secrets/key-file';
import { CLI } from '../helpers/entries';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis';

/**
 * The CLI, one process per call: as users run it (bin/tributary.js over the bundle the run's global
 * setup made from the sources, test/helpers/entries.ts), or from src/ through tsx for the test that
 * checks the two say the same (bundle.test.ts). The bundle starts in a quarter of tsx's CPU.
 */
const ROOT = path.resolve(__dirname, '../..');
const MAIN = path.join(ROOT, 'src/cli/main.ts');
// By path, so a test may run the CLI from another working directory.
const TSX = pathToFileURL(path.join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliRunner {
  run(args: string[], env?: Record<string, string>, cwd?: string): Promise<CliResult>;
  /** Exit 0 and nothing on stderr; returns stdout. */
  ok(args: string[]): Promise<string>;
  /** One `tributary: …` line on stderr, nothing on stdout, a non-zero exit; returns stderr. */
  fails(args: string[], env?: Record<string, string>): Promise<string>;
  dataDir: string;
  /** The key file of its DATA_DIR, which the CLI encrypts secrets with: a store given it reads what the CLI wrote. */
  keys: KeyFileKeyring;
  /** Removes the data directory. */
  cleanup(): void;
}

/** A runner bound to one Redis prefix and a fresh DATA_DIR, so test files never see each other's data. */
export function cliRunner(prefix: string, from: 'bundle' | 'source' = 'bundle'): CliRunner {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tributary-cli-'));
  const entry = from === 'bundle' ? [CLI] : ['--import', TSX, MAIN];
  const run = (args: string[], env: Record<string, string> = {}, cwd = ROOT): Promise<CliResult> =>
    new Promise((resolve) => {
      execFile(
        process.execPath,
        [...entry, ...args],
        { cwd, timeout: 30_000, env: { ...process.env, REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: prefix, DATA_DIR: dataDir, ...env } },
        (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
      );
    });
  return {
    run,
    dataDir,
    keys: new KeyFileKeyring(path.join(dataDir, DEFAULT_KEY_FILE), true),
    async ok(args) {
      const r = await run(args);
      expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: '' });
      return r.stdout;
    },
    async fails(args, env = {}) {
      const r = await run(args, env);
      expect({ args, code: r.code, stdout: r.stdout }).toEqual({ args, code: 1, stdout: '' });
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(/^tributary: /);
      return r.stderr;
    },
    cleanup() {
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A CLI test file's own Redis prefix, connection, tracker store and runner, all cleaned up after the
 * file. The store holds the runner's key file, so it reads what the CLI encrypts, and the CLI what it writes.
 */
export function cliFixture(name: string): { prefix: string; redis: Redis; store: TrackerStore; cli: CliRunner } {
  const prefix = uniquePrefix(name);
  const redis = new Redis(TEST_REDIS_URL);
  const cli = cliRunner(prefix);
  const store = new TrackerStore(redis, prefix, cli.keys);
  afterAll(async () => {
    redis.disconnect();
    await deletePrefix(prefix);
    cli.cleanup();
  });
  return { prefix, redis, store, cli };
}
