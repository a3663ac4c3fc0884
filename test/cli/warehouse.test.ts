import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { Redis } from 'ioredis';
import { localConnector } from '../../connectors/local';
import type { TrackedRecord } from '../../src/core/records/types';
import { createLogger } from '../../src/core/logger';
import { TrackerStore } from '../../src/core/trackers/store';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis';
import { cliRunner } from './run-cli';
import { eventRecord, seedTracker } from './seed';

const prefix = uniquePrefix('cli-wh');
const redis = new Redis(TEST_REDIS_URL);
const store = new TrackerStore(redis, prefix);
const cli = cliRunner(prefix);

const ada: TrackedRecord = { kind: 'user', id: '0190c000-0000-7000-8000-0000000000aa', receivedAt: '2024-01-01T00:00:00.000Z', uid: 'ada', properties: { plan: 'pro', visits: 3, address: { city: 'Paris', tags: ['a', 'b'] }, note: null } };
const events = [eventRecord(1), eventRecord(2, { event: 'signup', properties: { n: 2, big: 1099511627776 } }), eventRecord(3)];

/** Delivers records the way a worker does, through the connector, then lets go of the file. */
async function deliver(trackerId: string, records: TrackedRecord[]): Promise<void> {
  const logger = createLogger('silent');
  const writer = await localConnector.open({ trackerId, destinationId: 'wh', settings: {}, dataDir: cli.dataDir, logger, now: () => new Date() });
  try {
    const outcomes = await writer.write(records, AbortSignal.timeout(20_000));
    expect(outcomes.every((o) => o.status === 'ok')).toBe(true);
  } finally {
    await writer.close();
  }
}

beforeAll(async () => {
  await seedTracker(store, 'shop', [{ id: 'wh', type: 'local' }]);
  await deliver('shop', [ada, ...events]);
});

afterAll(async () => {
  redis.disconnect();
  await deletePrefix(prefix);
  cli.cleanup();
});

test('query prints an aligned table: numbers right, NULL spelled out, JSON as text', async () => {
  const out = await cli.ok(['query', 'shop', 'select _event, count(*) as n, max(big) as big from events group by 1 order by 1']);
  expect(out).toBe(['_event   | n |           big', '---------+---+--------------', 'purchase | 2 |          NULL', 'signup   | 1 | 1099511627776', '(2 rows)', ''].join('\n'));
  const user = await cli.ok(['query', 'shop', "select _uid, plan, visits, address, _properties->>'note' as note from users"]);
  expect(user.split('\n')[2]).toBe('ada  | pro  |      3 | {"city":"Paris","tags":["a","b"]} | NULL');
});

test('query --json prints columns and rows, 64-bit integers exact', async () => {
  const out = JSON.parse(await cli.ok(['query', 'shop', 'select _id, big from events where big is not null', '--json'])) as { columns: string[]; rows: unknown[][] };
  expect(out).toEqual({ columns: ['_id', 'big'], rows: [[events[1]!.id, '1099511627776']] });
});

test('a bad statement is reported with DuckDB pointing at it; writes are refused', async () => {
  const r = await cli.run(['query', 'shop', 'selec 1']);
  expect(r.code).toBe(1);
  expect(r.stdout).toBe('');
  expect(r.stderr).toMatch(/^tributary: Parser Error: syntax error at or near "selec"/);
  expect(r.stderr).toContain('LINE 1: selec 1');
  const write = await cli.run(['query', 'shop', 'delete from events']);
  expect(write.code).toBe(1);
  expect(write.stderr).toMatch(/read-only/i);
  expect(await cli.ok(['query', 'shop', 'select count(*) as n from events'])).toContain('3');
});

test('export writes users, sessions and events as CSV or Parquet', async () => {
  const csvDir = path.join(cli.dataDir, 'out-csv');
  const out = await cli.ok(['export', 'shop', '--format', 'csv', '--out', csvDir]);
  expect(out.split('\n')[0]).toBe(`Exported 4 rows of tracker shop to ${csvDir}:`);
  expect(out).toContain(`  ${path.join(csvDir, 'events.csv')}  (3 rows)`);
  const csv = readFileSync(path.join(csvDir, 'events.csv'), 'utf8').trim().split('\n');
  expect(csv).toHaveLength(4);
  expect(csv[0]).toContain('_event');
  expect(readFileSync(path.join(csvDir, 'sessions.csv'), 'utf8').trim().split('\n')).toHaveLength(1);

  const pqDir = path.join(cli.dataDir, 'out-parquet');
  const files = JSON.parse(await cli.ok(['export', 'shop', '--format', 'parquet', '--out', pqDir, '--json'])) as Array<{ table: string; file: string; rows: number }>;
  expect(Object.fromEntries(files.map((f) => [f.table, f.rows]))).toEqual({ users: 1, sessions: 0, events: 3 });
  expect(files.every((f) => f.file === path.join(pqDir, `${f.table}.parquet`))).toBe(true);
  const duck = await DuckDBInstance.create(':memory:');
  const conn = await duck.connect();
  const read = await conn.runAndReadAll(`select count(*) from '${path.join(pqDir, 'events.parquet')}'`);
  expect(read.getRows()[0]![0]).toBe(3n);
  conn.closeSync();
  duck.closeSync();
});

test('export without --out writes to ./<tracker>-export in the working directory', async () => {
  const cwd = mkdirSync(path.join(cli.dataDir, 'cwd'), { recursive: true })!;
  const r = await cli.run(['export', 'shop', '--format', 'csv'], {}, cwd);
  expect(r).toMatchObject({ code: 0, stderr: '' });
  expect(r.stdout.split('\n')[0]).toBe(`Exported 4 rows of tracker shop to ${path.join(cwd, 'shop-export')}:`);
  expect(existsSync(path.join(cwd, 'shop-export', 'users.csv'))).toBe(true);
});

test('refusals: no local destination, several, nothing delivered yet, bad format', async () => {
  await seedTracker(store, 'no-local', [{ id: 'sheet', type: 'google-sheets' }]);
  await seedTracker(store, 'two-local', [{ id: 'a', type: 'local' }, { id: 'b', type: 'local' }]);
  await seedTracker(store, 'fresh', [{ id: 'wh', type: 'local' }]);
  const cases: Array<[string[], string]> = [
    [['query', 'nope', 'select 1'], 'No tracker with id nope'],
    [['query', 'no-local', 'select 1'], 'Tracker no-local has no local destination.'],
    [['query', 'no-local', 'select 1', '--destination', 'sheet'], 'is of type google-sheets, not local'],
    [['query', 'two-local', 'select 1'], 'several local destinations (a, b); name one'],
    [['query', 'fresh', 'select 1'], 'nothing has been delivered to it yet'],
    [['export', 'shop'], "required option '--format <format>'"],
    [['export', 'shop', '--format', 'xlsx'], 'Allowed choices are parquet, csv'],
  ];
  const messages = await Promise.all(cases.map(([args]) => cli.fails(args)));
  cases.forEach(([, expected], i) => expect(messages[i]).toContain(expected));
});
