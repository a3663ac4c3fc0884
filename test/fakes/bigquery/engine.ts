import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';

/** A quoted DuckDB identifier. */
export const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** DuckDB schema of a dataset: one schema per `project.dataset`, so one in-memory database serves every project. */
export const schemaOf = (projectId: string, datasetId: string): string => `${projectId}.${datasetId}`;

export const tableRef = (projectId: string, datasetId: string, tableId: string): string => `${quote(schemaOf(projectId, datasetId))}.${quote(tableId)}`;

/**
 * The fake's storage: one in-memory DuckDB database holding every table's rows. A connection runs
 * one statement at a time, so every use goes through a queue; the fake's own concurrency rules
 * (concurrent DML) are checked on request arrival, before this queue.
 */
export class Engine {
  private tail: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly conn: DuckDBConnection,
  ) {}

  static async create(): Promise<Engine> {
    const instance = await DuckDBInstance.create(':memory:');
    const conn = await instance.connect();
    // BigQuery compares and stores timestamps in UTC; results are rendered from UTC micros.
    await conn.run(`SET TimeZone = 'UTC'`);
    return new Engine(instance, conn);
  }

  use<T>(fn: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
    const run = this.tail.then(
      () => fn(this.conn),
      () => fn(this.conn),
    );
    this.tail = run.catch(() => undefined);
    return run;
  }

  close(): void {
    this.conn.closeSync();
    this.instance.closeSync();
  }
}
