import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { exportWarehouse, queryWarehouse } from '../../../connectors/local';
import { allOk, event, openFixture, session, user, type LocalFixture } from './helpers';

const run = promisify(execFile);
const repoRoot = path.resolve(__dirname, '../../..');

describe('local warehouse: query and export helpers', () => {
  let fx: LocalFixture;
  beforeEach(async () => {
    fx = await openFixture();
    await fx.write([user('u1', { plan: 'pro' }), session('s1', { n: 1 }, 'u1'), event('view', { page: '/a' }), event('view', { page: '/b' })]);
  });
  afterEach(async () => {
    await fx.cleanup();
  });

  it('returns column names and rows in JSON form', async () => {
    const result = await queryWarehouse(fx.file, `SELECT _event, count(*) AS n, max(page) AS last FROM events GROUP BY ALL`);
    expect(result).toEqual({ columns: ['_event', 'n', 'last'], rows: [['view', '2', '/b']], truncated: false });
  });

  it('opens the file read-only', async () => {
    await expect(queryWarehouse(fx.file, 'DELETE FROM events')).rejects.toThrow(/read-only/);
    expect((await queryWarehouse(fx.file, 'SELECT count(*)::INT FROM events')).rows).toEqual([[2]]);
  });

  it('says so when nothing has been delivered yet', async () => {
    await expect(queryWarehouse(path.join(fx.dataDir, 'nope.duckdb'), 'SELECT 1')).rejects.toThrow(/no local warehouse at .*nope\.duckdb/);
  });

  it('lets the writer carry on after a query', async () => {
    await queryWarehouse(fx.file, 'SELECT 1');
    expect(allOk(await fx.write([event('view', { page: '/c' })]))).toBe(true);
    expect((await queryWarehouse(fx.file, 'SELECT count(*)::INT FROM events')).rows).toEqual([[3]]);
  });

  it.each(['parquet', 'csv'] as const)('exports one %s file per table', async (format) => {
    const outDir = path.join(fx.dataDir, 'export');
    const files = await exportWarehouse(fx.file, format, outDir);
    expect(files).toEqual([
      { table: 'users', file: path.join(outDir, `users.${format}`), rows: 1 },
      { table: 'sessions', file: path.join(outDir, `sessions.${format}`), rows: 1 },
      { table: 'events', file: path.join(outDir, `events.${format}`), rows: 2 },
    ]);
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    const reader = format === 'parquet' ? 'read_parquet' : 'read_csv';
    const back = await conn.runAndReadAll(`SELECT page FROM ${reader}('${files[2]!.file}') ORDER BY page`);
    expect(back.getRowsJson()).toEqual([['/a'], ['/b']]);
    conn.closeSync();
    db.closeSync();
    if (format === 'csv') expect((await readFile(files[0]!.file, 'utf8')).split('\n')[0]).toBe('_id,_uid,_received_at,_context,_properties,plan');
  });

  it('hands the file to a reader in another process while the writer keeps it open', async () => {
    // This process is the writer here; the reader is another process, as `tributary query` is.
    const held = await openFixture({ releaseAfterIdleMs: 600_000 });
    try {
      await held.write([event('view', { page: '/x' })]);
      const { stdout } = await run(process.execPath, ['--import', 'tsx', path.join(__dirname, 'fixtures/query-child.ts'), held.file, 'SELECT page FROM events'], { cwd: repoRoot });
      expect(JSON.parse(stdout)).toEqual({ columns: ['page'], rows: [['/x']], truncated: false });
      expect(allOk(await held.write([event('view', { page: '/y' })]))).toBe(true);
    } finally {
      await held.cleanup();
    }
  });
});
