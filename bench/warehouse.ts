import { DuckDBInstance } from '@duckdb/node-api';

/** The first row of `sql` over a local warehouse file, read once the server has stopped (DuckDB allows one writer). */
export async function firstRow(file: string, sql: string): Promise<unknown[]> {
  const instance = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY' });
  const conn = await instance.connect();
  try {
    return (await conn.runAndReadAll(sql)).getRows()[0]!;
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}
