import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TEST_REDIS_URL } from '../helpers/redis';
import { cliFixture, cliRunner, type CliResult } from './run-cli';
import { eventRecord, seedDeadLetters, seedTracker } from './seed';

/**
 * The built CLI: bin/tributary.js running the bundle dist/cli/tributary.js with its V8 code cache
 * (scripts/build-cli.js; the test run's global setup builds it first), as every CLI test runs it;
 * these check that it says what src/ run through tsx says, still loads the connectors' libraries only on demand,
 * and that its code cache is used when it fits and ignored when it does not.
 */
const ROOT = path.resolve(__dirname, '../..');
const HEAVY = ['googleapis', 'googleapis-common', '@google-cloud/bigquery', 'google-auth-library', '@duckdb/node-api', '@duckdb/node-bindings', 'cli-progress'];

const { prefix, redis, store, cli: built } = cliFixture('cli-bundle');
const fromSource = cliRunner(prefix, 'source');
// One DATA_DIR for both, so that nothing in the output differs but the way the CLI was loaded.
const env = { DATA_DIR: built.dataDir };

beforeAll(async () => {
  await seedTracker(store, 'shop', [{ id: 'wh', type: 'local' }]);
  await seedDeadLetters(redis, prefix, 'shop', 'wh', [eventRecord(1), eventRecord(2)]);
  // Read as a tracker, a hash makes Redis refuse (WRONGTYPE): a ReplyError, recognised by its name.
  await redis.hset(`${prefix}:tracker:odd`, 'a', '1');
});

afterAll(() => fromSource.cleanup());

test.each([
  [['--help']],
  [['trackers', '--help']],
  [['trackers', 'list']],
  [['trackers', 'list', '--json']],
  [['trackers', 'show', 'shop']],
  [['destinations', 'list', 'shop']],
  [['dlq', 'list', 'shop', 'wh']],
  [['trackers', 'show', 'nope']],
  [['trackers', 'show', 'odd']],
  [['trackers', 'frobnicate']],
])('%j: the bundle prints what the source prints', async (args) => {
  const [expected, actual] = await Promise.all([fromSource.run(args, env), built.run(args, env)]);
  expect(actual).toEqual(expected);
});

/** The packages (by name) loaded from node_modules by a call of the built CLI, and whether the bundle was. */
async function loadedBy(args: string[]): Promise<{ packages: Set<string>; bundle: boolean }> {
  const file = path.join(built.dataDir, `loaded-${args.join('-')}.txt`);
  const hook = path.join(__dirname, 'record-loaded-modules.cjs');
  const r = await built.run(args, { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${hook}`, LOADED_MODULES_FILE: file });
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
  const ids = readFileSync(file, 'utf8').split('\n');
  const packages = new Set(ids.map((id) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(id)?.[1]).filter((name) => name !== undefined));
  return { packages, bundle: ids.includes(path.join(ROOT, 'dist', 'cli', 'tributary.js')) };
}

test.each([[['trackers', 'list']], [['destinations', 'list', 'shop']], [['dlq', 'list', 'shop', 'wh']]])('%j: the bundle loads no connector library', async (args) => {
  const { packages, bundle } = await loadedBy(args);
  // The bundle holds commander, ioredis, zod…: that it ran is what shows the hook saw the call.
  expect(bundle).toBe(true);
  expect(HEAVY.filter((name) => packages.has(name))).toEqual([]);
});

test('a command that tests a local destination loads DuckDB from node_modules, outside the bundle', async () => {
  const { packages } = await loadedBy(['destinations', 'test', 'shop', 'wh']);
  expect(packages).toContain('@duckdb/node-api');
  expect(HEAVY.filter((name) => packages.has(name) && !name.startsWith('@duckdb/'))).toEqual([]);
});

describe('the code cache', () => {
  // A copy of the built CLI, so that these tests may spoil its cache without touching dist/.
  const root = mkdtempSync(path.join(os.tmpdir(), 'tributary-bundle-'));
  const cacheFile = path.join(root, 'dist', 'cli', 'tributary.cache');
  let expected: CliResult;

  beforeAll(async () => {
    cpSync(path.join(ROOT, 'bin'), path.join(root, 'bin'), { recursive: true });
    cpSync(path.join(ROOT, 'dist', 'cli'), path.join(root, 'dist', 'cli'), { recursive: true });
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'));
    expected = await fromSource.run(['trackers', 'list'], env);
    expect(expected.code).toBe(0);
  });

  afterAll(() => rmSync(root, { recursive: true, force: true }));

  /** `trackers list` through the copy, under NODE_DEBUG=tributary: what it printed, and what it said of the cache. */
  function run(nodeFlags: string[] = []): Promise<{ result: CliResult; cache: string[] }> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [...nodeFlags, path.join(root, 'bin', 'tributary.js'), 'trackers', 'list'],
        { timeout: 30_000, env: { ...process.env, REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: prefix, ...env, NODE_DEBUG: 'tributary' } },
        (err, stdout, stderr) => {
          const cache = stderr.split('\n').flatMap((line) => /^TRIBUTARY \d+: code cache (.*)$/.exec(line)?.[1] ?? []);
          const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
          resolve({ result: { code, stdout, stderr: stderr.replace(/^TRIBUTARY .*\n/gm, '') }, cache });
        },
      );
    });
  }

  test('a seed cache (the build writes one, from a run of --help) is used once, then replaced by a full one', async () => {
    const cache = readFileSync(cacheFile);
    expect(cache.toString('latin1', 0, 64)).toMatch(/^[0-9a-f]{32} (seed|full) *\n$/);
    // dist/'s cache is already full if the built CLI ran before this copy was made.
    cache.write('seed', 33, 'latin1');
    writeFileSync(cacheFile, cache);
    expect(await run()).toEqual({ result: expected, cache: ['used (seed)', 'written'] });
    expect(await run()).toEqual({ result: expected, cache: ['used'] });
    expect(readFileSync(cacheFile, 'latin1').slice(0, 64)).toMatch(/^[0-9a-f]{32} full *\n$/);
  });

  test('a cache V8 refuses is not used, and is written again', async () => {
    const cache = readFileSync(cacheFile);
    // The right header, then bytes that are no V8 cache.
    writeFileSync(cacheFile, Buffer.concat([cache.subarray(0, 64), Buffer.alloc(4096, 7)]));
    expect(await run()).toEqual({ result: expected, cache: ['rejected', 'written'] });
    expect(await run()).toEqual({ result: expected, cache: ['used'] });
  });

  test('a cache made for another build is not handed to V8, which only checks the length of the source', async () => {
    const cache = readFileSync(cacheFile);
    cache.write('0'.repeat(32), 0, 'latin1');
    writeFileSync(cacheFile, cache);
    expect(await run()).toEqual({ result: expected, cache: ['absent', 'written'] });
    expect(await run()).toEqual({ result: expected, cache: ['used'] });
  });

  test('a run with node flags of its own never writes the cache: V8 may count those flags in its check', async () => {
    rmSync(cacheFile);
    expect(await run(['--no-warnings'])).toEqual({ result: expected, cache: ['absent'] });
    expect(existsSync(cacheFile)).toBe(false);
    expect(await run()).toEqual({ result: expected, cache: ['absent', 'written'] });
    expect(await run(['--no-warnings'])).toEqual({ result: expected, cache: ['used'] });
  });

  test('without the bundle, it says to build', async () => {
    rmSync(path.join(root, 'dist'), { recursive: true });
    expect(await run()).toEqual({ result: { code: 1, stdout: '', stderr: `tributary: not built yet; run \`npm run build\` in ${root}\n` }, cache: [] });
  });
});
