import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { localConnector, queryWarehouse } from '../../../connectors/local';
import { checkpointThresholdMb, Warehouse } from '../../../connectors/local/database';
import { DEFAULT_BATCH_RECORDS } from '../../../connectors/local/config';
import { RetryableError } from '../../../connectors/errors';
import { createLogger } from '../../../src/core/logger';
import { parseExactJson } from '../../../src/core/records/exact-json';
import type { JsonValue } from '../../../src/core/records/types';
import { burstDeliveries } from '../../helpers/webhook-burst';
import { event } from './helpers';

/**
 * DuckDB's default buffer pool is 80 % of the machine's RAM, which a writer kept open under steady
 * load fills: the writer and every read run under the limits the host gives, and each instance
 * spills into a directory of its own that is gone once it closes.
 */
let dataDir: string;
let tempDirectory: string;

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'tributary-engine-'));
  tempDirectory = path.join(dataDir, 'spill');
});
afterEach(async () => rm(dataDir, { recursive: true, force: true }));

const setting = (rows: unknown[][]) => String(rows[0]?.[0]);

test('the writer runs under the memory limit and spill directory it is given, and removes the directory on close', async () => {
  const writer = await localConnector.open({ trackerId: 'shop', destinationId: 'local', settings: {}, dataDir, engine: { memoryMb: 48, tempDirectory }, logger: createLogger('silent'), now: () => new Date() });
  await writer.write([event('signup', {})], new AbortController().signal);
  const file = path.join(dataDir, 'warehouse', 'shop.duckdb');
  const seen = Warehouse.acquire(file, 60_000, { memoryMb: 999, tempDirectory: '/nowhere' });
  try {
    const [limit, spill, checkpoint] = await seen.use(undefined, async (conn) => {
      const reader = await conn.runAndReadAll("SELECT current_setting('memory_limit'), current_setting('temp_directory'), current_setting('checkpoint_threshold')");
      return reader.getRows()[0]!.map(String);
    });
    // The first holder's limits hold while the file is shared (the second acquire named others).
    expect(limit).toMatch(/^4[78]\.\d+ MiB$/);
    expect(path.dirname(spill!)).toBe(tempDirectory);
    // A quarter of 48 MiB is below DuckDB's default, which it keeps.
    expect(checkpoint).toMatch(/^1[56]\.\d+ MiB$/);
  } finally {
    await seen.release();
    await writer.close();
  }
  expect(await readdir(tempDirectory).catch(() => [])).toEqual([]);
});

test('a query runs under the limits it is given, and its spill directory is gone afterwards', async () => {
  const writer = await localConnector.open({ trackerId: 'shop', destinationId: 'local', settings: {}, dataDir, logger: createLogger('silent'), now: () => new Date() });
  await writer.write([event('signup', {})], new AbortController().signal);
  await writer.close();
  const file = path.join(dataDir, 'warehouse', 'shop.duckdb');
  const result = await queryWarehouse(file, "SELECT current_setting('memory_limit'), current_setting('temp_directory')", { limits: { memoryMb: 64, tempDirectory } });
  expect(setting(result.rows)).toMatch(/^6[34]\.\d+ MiB$/);
  expect(path.dirname(String(result.rows[0]?.[1]))).toBe(tempDirectory);
  expect(await readdir(tempDirectory).catch(() => [])).toEqual([]);
});

test('a query that needs more than the limit spills to disk instead of failing', async () => {
  const writer = await localConnector.open({ trackerId: 'shop', destinationId: 'local', settings: {}, dataDir, logger: createLogger('silent'), now: () => new Date() });
  await writer.write([event('signup', {})], new AbortController().signal);
  await writer.close();
  const file = path.join(dataDir, 'warehouse', 'shop.duckdb');
  // A sort of 3 million rows of ~40 bytes: about 120 MB, twice the limit.
  const sql = "SELECT count(*) FROM (SELECT i, md5(i::VARCHAR) AS h FROM range(3000000) t(i) ORDER BY h)";
  const result = await queryWarehouse(file, sql, { limits: { memoryMb: 64, tempDirectory } });
  expect(Number(result.rows[0]?.[0])).toBe(3_000_000);
}, 60_000);

/**
 * Batches of 5 000 events with random ids (randomUUID), as an import's, until one fails or
 * `maxRows` are stored: the rows stored, the error, and the writer's memory limit then.
 */
async function writeUntilFailure(engine: { memoryMb: number; maxMemoryMb?: number }, maxRows = 2_000_000): Promise<{ rows: number; failure: unknown; limit: string }> {
  const writer = await localConnector.open({ trackerId: 'shop', destinationId: 'local', settings: { batchRecords: 5000 }, dataDir, engine: { ...engine, tempDirectory }, logger: createLogger('silent'), now: () => new Date() });
  const file = path.join(dataDir, 'warehouse', 'shop.duckdb');
  try {
    let rows = 0;
    let failure: unknown;
    while (failure === undefined && rows < maxRows) {
      failure = await writer.write(Array.from({ length: 5000 }, () => event('imported', {})), new AbortController().signal).then(() => undefined, (err: unknown) => err);
      if (failure === undefined) rows += 5000;
    }
    // The writer's instance, shared with this acquire while the writer holds the file.
    const seen = Warehouse.acquire(file, 60_000, { memoryMb: 999, tempDirectory });
    const limit = await seen.use(undefined, async (conn) => String((await conn.runAndReadAll("SELECT current_setting('memory_limit')")).getRows()[0]![0]));
    await seen.release();
    return { rows, failure, limit };
  } finally {
    await writer.close();
  }
}

test('a writer that outgrows its memory limit and ceiling fails the batch as retryable, naming WAREHOUSE_MEMORY_MAX_MB', async () => {
  const { failure, limit } = await writeUntilFailure({ memoryMb: 16 });
  expect(failure).toBeInstanceOf(RetryableError);
  expect((failure as RetryableError).details.reason).toBe('out-of-memory');
  expect((failure as Error).message).toMatch(/needs more memory than WAREHOUSE_MEMORY_MAX_MB lets its writer take.*random ids.*Out of Memory Error/s);
  expect(limit).toMatch(/^1[56]\.\d+ MiB$/);
}, 120_000);

test('below its ceiling the writer doubles its own limit, and the batch that ran out of memory goes through', async () => {
  const alone = await writeUntilFailure({ memoryMb: 16 });
  expect(alone.failure).toBeInstanceOf(RetryableError);
  await rm(path.join(dataDir, 'warehouse'), { recursive: true, force: true });
  const raised = await writeUntilFailure({ memoryMb: 16, maxMemoryMb: 32 }, alone.rows + 20_000);
  expect(raised.failure).toBeUndefined();
  expect(raised.rows).toBe(alone.rows + 20_000);
  expect(raised.limit).toMatch(/^3[12]\.\d+ MiB$/);
}, 120_000);

test('a commit of wide records that runs out of memory grows the limit, and the batch goes again on the file opened afresh: stored once, none refused as a duplicate', async () => {
  // About 240 columns, most JSON: every column takes blocks of its own at commit, and under 128 MiB
  // the third or fourth batch of 500 runs out while committing.
  const records = [0, 1, 2].flatMap((copy) =>
    burstDeliveries(copy)
      .filter((d) => d.contentType === 'application/json' && !d.body.startsWith('['))
      .map((d) => event(d.source, parseExactJson(d.body) as Record<string, JsonValue>, { id: randomUUID() })),
  );
  const warnings: string[] = [];
  const logger = createLogger('warn', { write: (line: string) => void warnings.push(line) });
  const writer = await localConnector.open({ trackerId: 'shop', destinationId: 'local', settings: {}, dataDir, engine: { memoryMb: 128, maxMemoryMb: 1024, tempDirectory }, logger, now: () => new Date() });
  try {
    for (let i = 0; i < records.length; i += 500) {
      const outcomes = await writer.write(records.slice(i, i + 500), new AbortController().signal);
      expect(outcomes.filter((o) => o.status !== 'ok')).toEqual([]);
    }
  } finally {
    await writer.close();
  }
  expect(warnings.join('')).toMatch(/"memoryMb":256,"msg":"a write of the local warehouse ran out of memory: its writer now takes up to this much/);
  const stored = await queryWarehouse(path.join(dataDir, 'warehouse', 'shop.duckdb'), 'SELECT count(*), count(DISTINCT _id) FROM events');
  expect(stored.rows[0]!.map(Number)).toEqual([records.length, records.length]);
}, 120_000);

test("wide webhook payloads as a first delivery, appended straight in batches of the default size under the default limits (and the writer's 32 MB of WAL): every record stored once, none refused", async () => {
  // ~7 400 payloads, 42 MiB of JSON: past the WAL at which the writer checkpoints, in batches of 5 000.
  const records = [0, 1, 2, 3, 4, 5].flatMap((copy) =>
    burstDeliveries(copy)
      .filter((d) => d.contentType === 'application/json' && !d.body.startsWith('['))
      .map((d) => event(d.source, parseExactJson(d.body) as Record<string, JsonValue>, { id: randomUUID() })),
  );
  const writer = await localConnector.open({ trackerId: 'shop', destinationId: 'local', settings: {}, dataDir, engine: { memoryMb: 128, maxMemoryMb: 1024, tempDirectory }, logger: createLogger('silent'), now: () => new Date() });
  try {
    for (let i = 0; i < records.length; i += DEFAULT_BATCH_RECORDS) {
      const outcomes = await writer.write(records.slice(i, i + DEFAULT_BATCH_RECORDS), new AbortController().signal, { resend: false });
      expect(outcomes.filter((o) => o.status !== 'ok')).toEqual([]);
    }
  } finally {
    await writer.close();
  }
  const stored = await queryWarehouse(path.join(dataDir, 'warehouse', 'shop.duckdb'), "SELECT count(*), count(DISTINCT _id), (SELECT count(*) FROM duckdb_columns() WHERE table_name = 'events') FROM events");
  const [rows, distinct, columns] = stored.rows[0]!.map(Number);
  expect([rows, distinct]).toEqual([records.length, records.length]);
  expect(columns).toBeGreaterThan(200);
}, 180_000);

test("the writer checkpoints after a quarter of its memory limit's WAL, between DuckDB's 16 MB and 64 MB", () => {
  expect([48, 64, 128, 200, 256, 1024].map(checkpointThresholdMb)).toEqual([16, 16, 32, 50, 64, 64]);
});

