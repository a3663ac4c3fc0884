import { mkdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection, type Json } from '@duckdb/node-api';
import { sleep } from '../../src/core/sleep';
import { RetryableError } from '../errors';
import { Warehouse } from './database';
import { errorMessage, isLockError } from './duckdb-errors';
import { withFileMutex } from './file-mutex';
import { announceReader, waitWhileAnnounced } from './file-handoff';
import { DEFAULT_ENGINE_MEMORY_MB, engineOptions, type EngineLimits } from './engine';
import { quoteLiteral } from './sql';
import { TABLE } from './tables';

export interface ReadOptions {
  /** How long to wait for a writer in another process to hand the file over. Default 10 000 ms. */
  lockTimeoutMs?: number;
  /** DuckDB's memory limit and spill directory for the read. Default: 128 MiB, spilling under the system's temporary directory. */
  limits?: EngineLimits;
}

export interface QueryOptions extends ReadOptions {
  /** Rows read at most; the rest of the result is never materialized. Default: all. */
  maxRows?: number;
}

export interface QueryResult {
  columns: string[];
  /** Values in JSON form: 64-bit integers and timestamps as strings, JSON columns as their text. */
  rows: Json[][];
  /** More rows than `maxRows` exist. */
  truncated: boolean;
}

/** There is no warehouse file yet: nothing has been delivered to it. */
export class WarehouseMissingError extends Error {
  override name = 'WarehouseMissingError';
}

type DuckDBOptions = Record<string, string>;

/**
 * A query may be anyone's text (the console sends it over HTTP): it reads this file and nothing
 * else. No COPY … TO, read_text() or ATTACH of other files, and the setting cannot be turned back on.
 */
const SANDBOXED: DuckDBOptions = { enable_external_access: 'false', lock_configuration: 'true' };

export type ExportFormat = 'parquet' | 'csv';

export interface ExportedFile {
  table: string;
  file: string;
  rows: number;
}

/** Opens `file` read-only, retrying while it is locked until `lockTimeoutMs` after `since` (ms). */
async function openReadOnly(file: string, lockTimeoutMs: number, since: number, extra: DuckDBOptions): Promise<DuckDBInstance> {
  const deadline = since + lockTimeoutMs;
  for (;;) {
    try {
      return await DuckDBInstance.create(file, { access_mode: 'READ_ONLY', ...extra });
    } catch (err) {
      if (!isLockError(err) || Date.now() >= deadline) {
        if (!isLockError(err)) throw err;
        throw new RetryableError(`the local warehouse ${file} is held by another process that did not release it within ${lockTimeoutMs} ms; try again when it is idle`, { reason: 'locked', cause: err });
      }
      await sleep(50);
    }
  }
}

/**
 * Opens the warehouse read-only for `fn`. A writer in this process is closed first; one elsewhere
 * is asked to let go (file-handoff.ts) and waited for: until its holder marker is gone, and then
 * until DuckDB's lock lets the reader in. The marker is what keeps the reader out in `npm start`,
 * where the console's queries run on the API's thread and the writer on the delivery thread: one
 * process, in which DuckDB's lock does not keep two instances apart.
 */
async function withReadOnly<T>(file: string, opts: ReadOptions, extra: DuckDBOptions, fn: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
  const target = path.resolve(file);
  const exists = await stat(target).then(
    (s) => s.isFile(),
    () => false,
  );
  if (!exists) throw new WarehouseMissingError(`no local warehouse at ${target}: nothing has been delivered to it yet`);
  return withFileMutex(target, async () => {
    await Warehouse.closeIfOpen(target);
    const withdraw = await announceReader(target);
    try {
      const engine = await engineOptions(opts.limits ?? { memoryMb: DEFAULT_ENGINE_MEMORY_MB, tempDirectory: path.join(tmpdir(), 'tributary-duckdb') });
      try {
        const lockTimeoutMs = opts.lockTimeoutMs ?? 10_000;
        const started = Date.now();
        await waitWhileAnnounced(target, ['holder'], undefined, lockTimeoutMs);
        const instance = await openReadOnly(target, lockTimeoutMs, started, { ...engine.options, ...extra });
        const conn = await instance.connect().catch((err: unknown) => {
          instance.closeSync();
          throw err;
        });
        try {
          return await fn(conn);
        } finally {
          conn.closeSync();
          instance.closeSync();
        }
      } finally {
        await engine.removeSpill();
      }
    } finally {
      await withdraw();
    }
  });
}

/** Runs SQL against a warehouse file opened read-only and sandboxed (statements that write are refused). */
export async function queryWarehouse(file: string, sql: string, opts: QueryOptions = {}): Promise<QueryResult> {
  return withReadOnly(file, opts, SANDBOXED, async (conn) => {
    if (opts.maxRows === undefined) {
      const reader = await conn.runAndReadAll(sql);
      return { columns: reader.columnNames(), rows: reader.getRowsJson(), truncated: false };
    }
    // Streamed: a huge result costs one extra chunk, not its whole size in memory.
    const reader = await conn.streamAndReadUntil(sql, opts.maxRows + 1).catch((err: unknown) => {
      // Streaming prepares the statements first and says so; the reader wants DuckDB's own words.
      throw new Error(errorMessage(err).replace(/^Failed to extract statements: /, ''));
    });
    const rows = reader.getRowsJson();
    return { columns: reader.columnNames(), rows: rows.slice(0, opts.maxRows), truncated: rows.length > opts.maxRows };
  });
}

/** Writes `users`, `sessions` and `events` to `<outDir>/<table>.<format>` with DuckDB's COPY. */
export async function exportWarehouse(file: string, format: ExportFormat, outDir: string, opts: ReadOptions = {}): Promise<ExportedFile[]> {
  const dir = path.resolve(outDir);
  await mkdir(dir, { recursive: true });
  // Exporting writes files by design, so this one is not sandboxed; only the CLI offers it.
  return withReadOnly(file, opts, {}, async (conn) => {
    const exported: ExportedFile[] = [];
    for (const table of Object.values(TABLE)) {
      const target = path.join(dir, `${table}.${format}`);
      const options = format === 'csv' ? 'FORMAT csv, HEADER true' : 'FORMAT parquet';
      const reader = await conn.runAndReadAll(`COPY ${table} TO ${quoteLiteral(target)} (${options})`);
      exported.push({ table, file: target, rows: Number(reader.getRows()[0]?.[0] ?? 0) });
    }
    return exported;
  });
}
