import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { localConnector, queryWarehouse } from '../../../connectors/local';
import { Warehouse } from '../../../connectors/local/database';
import { RetryableError } from '../../../connectors/errors';
import { createLogger } from '../../../src/core/logger';
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
    const [limit, spill] = await seen.use(undefined, async (conn) => {
      const reader = await conn.runAndReadAll("SELECT current_setting('memory_limit'), current_setting('temp_directory')");
      return reader.getRows()[0]!.map(String);
    });
    // The first holder's limits hold while the file is shared (the second acquire named others).
    expect(limit).toMatch(/^4[78]\.\d+ MiB$/);
    expect(path.dirname(spill!)).toBe(tempDirectory);
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

test('a writer whose _id index outgrows its memory limit fails the batch as retryable, naming WAREHOUSE_MEMORY_MB', async () => {
  const writer = await localConnector.open({ trackerId: 'shop', destinationId: 'local', settings: { batchRecords: 5000 }, dataDir, engine: { memoryMb: 16, tempDirectory }, logger: createLogger('silent'), now: () => new Date() });
  try {
    // Random ids (randomUUID), as an import's: each insert touches the whole index, which DuckDB keeps in memory.
    let failure: unknown;
    for (let batch = 0; batch < 200 && failure === undefined; batch++) {
      await writer.write(Array.from({ length: 5000 }, () => event('imported', {})), new AbortController().signal).catch((err: unknown) => (failure = err));
    }
    expect(failure).toBeInstanceOf(RetryableError);
    expect((failure as RetryableError).details.reason).toBe('out-of-memory');
    expect((failure as Error).message).toMatch(/needs more memory than WAREHOUSE_MEMORY_MB gives it.*_id index.*Out of Memory Error/s);
  } finally {
    await writer.close();
  }
}, 120_000);
