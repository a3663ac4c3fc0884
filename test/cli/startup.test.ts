import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { TrackerStore } from '../../src/core/trackers/store';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis';
import { cliRunner } from './run-cli';
import { seedDeadLetters, eventRecord, seedTracker } from './seed';

/**
 * Commands that read Redis only must not load the libraries of the connectors (tens to hundreds of
 * milliseconds each): they load when a command writes to or reads a destination. Speed itself is
 * measured by `npm run bench:cli`, never asserted here.
 */
const HEAVY = ['googleapis', 'googleapis-common', '@google-cloud/bigquery', 'google-auth-library', '@duckdb/node-api', '@duckdb/node-bindings', 'cli-progress'];

const prefix = uniquePrefix('cli-lazy');
const redis = new Redis(TEST_REDIS_URL);
const store = new TrackerStore(redis, prefix);
// From src/, where every package is modules of its own that the hook can see (bundle.test.ts checks the bundle).
const cli = cliRunner(prefix, 'source');
const HOOK = path.join(__dirname, 'record-loaded-modules.cjs');
const COUNT_CONNECTIONS = path.join(__dirname, 'count-connections.cjs');

beforeAll(async () => {
  await seedTracker(store, 'lazy', [{ id: 'wh', type: 'local' }]);
  await seedDeadLetters(redis, prefix, 'lazy', 'wh', [eventRecord(1)]);
});

afterAll(async () => {
  redis.disconnect();
  await deletePrefix(prefix);
  cli.cleanup();
});

/** The packages (by name) a CLI call loaded. */
async function packagesLoadedBy(args: string[]): Promise<Set<string>> {
  const file = path.join(cli.dataDir, `loaded-${args.join('-')}.txt`);
  const r = await cli.run(args, { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${HOOK}`, LOADED_MODULES_FILE: file });
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
  const names = new Set<string>();
  for (const id of readFileSync(file, 'utf8').split('\n')) {
    const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(id);
    if (match) names.add(match[1]!);
  }
  return names;
}

test.each([
  [['trackers', 'list']],
  [['trackers', 'show', 'lazy']],
  [['destinations', 'list', 'lazy']],
  [['dlq', 'list', 'lazy', 'wh']],
])('%j loads no connector library', async (args) => {
  const loaded = await packagesLoadedBy(args);
  // The hook sees the packages the command does need, so an empty list cannot pass for a lean one.
  expect(loaded).toContain('ioredis');
  expect(loaded).toContain('commander');
  expect(HEAVY.filter((name) => loaded.has(name))).toEqual([]);
});

test('a command that tests a local destination loads DuckDB, and only it', async () => {
  const loaded = await packagesLoadedBy(['destinations', 'test', 'lazy', 'wh']);
  expect(loaded).toContain('@duckdb/node-api');
  expect(HEAVY.filter((name) => loaded.has(name) && !name.startsWith('@duckdb/'))).toEqual([]);
});

/** The TCP connections a CLI call opened. */
async function connectionsOpenedBy(args: string[], env: Record<string, string> = {}): Promise<number> {
  const file = path.join(cli.dataDir, `connections-${args.join('-')}.txt`);
  const r = await cli.run(args, { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${COUNT_CONNECTIONS}`, CONNECTIONS_FILE: file, ...env });
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
  return Number(readFileSync(file, 'utf8'));
}

test('a command opens one Redis connection, with REDIS_URL or with a running embedded Redis', async () => {
  expect(await connectionsOpenedBy(['trackers', 'show', 'lazy'])).toBe(1);
  // The embedded Redis of a running `npm start` is found by the URL it leaves under DATA_DIR; here that URL is the test Redis.
  mkdirSync(path.join(cli.dataDir, 'redis'), { recursive: true });
  writeFileSync(path.join(cli.dataDir, 'redis', 'url'), `${TEST_REDIS_URL}\n`);
  expect(await connectionsOpenedBy(['trackers', 'show', 'lazy'], { REDIS_URL: '' })).toBe(1);
});
