import type { DuckDBType, DuckDBValue } from '@duckdb/node-api';
import type { Catalog } from './catalog';
import { tableRef } from './engine';
import { FakeApiError, invalidQuery, notFound } from './errors';
import { isAlterTable, isDropTable, parseAlterColumns, parseDropTable } from './ddl';
import { rewrite, splitStatements, type Rewritten, type TableName } from './dialect';
import { createParamTable, dropParamTables, scalarValues, type QueryParameter } from './params';

export interface QueryRequest {
  projectId: string;
  query: string;
  location?: string;
  queryParameters?: QueryParameter[];
  defaultDataset?: { projectId?: string; datasetId?: string };
  useLegacySql?: boolean;
  /** `formatOptions.useInt64Timestamp`: TIMESTAMP values as epoch microseconds rather than float seconds. */
  useInt64Timestamp: boolean;
}

export interface QueryResult {
  statementType: Rewritten['kind'] | 'ALTER_TABLE' | 'DROP_TABLE' | 'SCRIPT';
  schema?: { fields: Array<{ name: string; type: string; mode: 'NULLABLE' }> };
  rows?: Array<{ f: Array<{ v: string | null }> }>;
  numDmlAffectedRows?: number;
  tables: TableName[];
  /** A script's statements, in order. */
  children?: QueryResult[];
}

export interface QueryOptions {
  /** DML over a table that received streamed rows this recently is refused. Google: up to 90 minutes. */
  streamingBufferMs: number;
  /** Extra time a DML statement holds its table, to widen the window in which a concurrent one collides. */
  dmlLatencyMs: number;
  now: () => number;
}

/** Tables with a DML statement in progress: BigQuery aborts a conflicting concurrent one. */
const inFlight = new WeakMap<Catalog, Set<string>>();

function resolver(catalog: Catalog, req: QueryRequest) {
  return {
    table(parts: string[]) {
      const full = parts.length === 3 ? parts : parts.length === 2 ? [req.projectId, ...parts] : [req.defaultDataset?.projectId ?? req.projectId, req.defaultDataset?.datasetId, ...parts];
      const [projectId, datasetId, tableId] = full;
      if (parts.length > 3 || !datasetId || !tableId || !projectId) throw invalidQuery(`Table "${parts.join('.')}" must be qualified with a dataset (e.g. dataset.table).`);
      const location = req.location ?? 'US';
      if (!catalog.hasDataset(projectId, datasetId) || catalog.dataset(projectId, datasetId).location.toLowerCase() !== location.toLowerCase()) {
        throw notFound(`Dataset ${projectId}:${datasetId} was not found in location ${location}`);
      }
      if (!catalog.dataset(projectId, datasetId).tables.has(tableId)) throw notFound(`Table ${projectId}:${datasetId}.${tableId} was not found in location ${location}`);
      return { ref: tableRef(projectId, datasetId, tableId), name: { projectId, datasetId, tableId } };
    },
  };
}

/** DDL: the one ALTER TABLE form ddl.ts knows. A missing table is no error with IF EXISTS. */
async function alterTable(catalog: Catalog, req: QueryRequest): Promise<QueryResult> {
  const stmt = parseAlterColumns(req.query);
  let name: TableName;
  try {
    name = resolver(catalog, req).table(stmt.table).name;
  } catch (err) {
    if (stmt.ifTableExists && err instanceof FakeApiError && err.status === 404) return { statementType: 'ALTER_TABLE', tables: [] };
    throw err;
  }
  await catalog.alterColumnTypes(name, stmt.changes);
  return { statementType: 'ALTER_TABLE', tables: [name] };
}

/** DDL: DROP TABLE, as a script drops what it staged. A missing table is no error with IF EXISTS. */
async function dropTable(catalog: Catalog, req: QueryRequest): Promise<QueryResult> {
  const stmt = parseDropTable(req.query);
  let name: TableName;
  try {
    name = resolver(catalog, req).table(stmt.table).name;
  } catch (err) {
    if (stmt.ifExists && err instanceof FakeApiError && err.status === 404) return { statementType: 'DROP_TABLE', tables: [] };
    throw err;
  }
  await catalog.deleteTable(name.projectId, name.datasetId, name.tableId);
  return { statementType: 'DROP_TABLE', tables: [name] };
}

/**
 * Runs a query: one statement, or a script of several run in order, each committed as it ends
 * (as BigQuery does outside BEGIN TRANSACTION); a failing statement ends the script there.
 */
export async function runQuery(catalog: Catalog, req: QueryRequest, opts: QueryOptions): Promise<QueryResult> {
  const statements = splitStatements(req.query);
  if (statements.length <= 1) return runStatement(catalog, req, opts);
  const children: QueryResult[] = [];
  for (const query of statements) children.push(await runStatement(catalog, { ...req, query }, opts));
  const last = children[children.length - 1]!;
  return { statementType: 'SCRIPT', ...(last.schema ? { schema: last.schema, rows: last.rows } : {}), tables: [], children };
}

/** DuckDB's refusals in BigQuery's words, where they correspond; otherwise `invalidQuery` with DuckDB's text. */
function translate(err: unknown): FakeApiError {
  if (err instanceof FakeApiError) return err;
  const message = String((err as { message?: unknown })?.message ?? err);
  const column = /Referenced column "([^"]+)" not found/.exec(message);
  if (column) return invalidQuery(`Unrecognized name: ${column[1]}`);
  const required = /NOT NULL constraint failed: [^.]+\.(\S+)/.exec(message);
  if (required) return invalidQuery(`Required field ${required[1]} cannot be null`);
  return invalidQuery(`Query error (this fake runs GoogleSQL on DuckDB): ${message}`);
}

function bigQueryType(type: DuckDBType): string {
  const name = type.toString();
  if (type.alias === 'JSON') return 'JSON';
  if (/^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT)$/.test(name)) return 'INTEGER';
  if (/^(FLOAT|DOUBLE)$/.test(name)) return 'FLOAT';
  if (name === 'DECIMAL(38,0)') return 'BIGNUMERIC';
  if (name.startsWith('DECIMAL')) return 'NUMERIC';
  if (name === 'BOOLEAN') return 'BOOLEAN';
  if (name.startsWith('TIMESTAMP')) return 'TIMESTAMP';
  if (name === 'DATE') return 'DATE';
  return 'STRING';
}

/** One cell as the REST API renders it: every value is text; TIMESTAMP as epoch micros or float seconds. */
function render(type: string, value: DuckDBValue, int64Timestamp: boolean): string | null {
  if (value === null) return null;
  if (type === 'TIMESTAMP') {
    const micros = (value as { micros: bigint }).micros;
    return int64Timestamp ? micros.toString() : (Number(micros) / 1e6).toString();
  }
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  return String(value);
}

/** Only the values the statement names: DuckDB refuses unknown named parameters. */
function bindable(values: DuckDBValue[] | Record<string, DuckDBValue>, sql: string): DuckDBValue[] | Record<string, DuckDBValue> | undefined {
  if (Array.isArray(values)) return values.length > 0 ? values : undefined;
  const used = Object.entries(values).filter(([name]) => new RegExp(`\\$${name}\\b`).test(sql));
  return used.length > 0 ? Object.fromEntries(used) : undefined;
}

/**
 * Runs one GoogleSQL statement: parameters are bound (arrays used in UNNEST as temp tables), the
 * MERGE rule "must match at most one source row for each target row" is checked before the
 * statement runs, DML over rows in the streaming buffer and concurrent DML on one table are
 * refused as BigQuery refuses them.
 */
async function runStatement(catalog: Catalog, req: QueryRequest, opts: QueryOptions): Promise<QueryResult> {
  if (req.useLegacySql === true) throw invalidQuery('This fake runs GoogleSQL only (useLegacySql: false).');
  if (isAlterTable(req.query)) return alterTable(catalog, req);
  if (isDropTable(req.query)) return dropTable(catalog, req);
  const stmt = rewrite(req.query, resolver(catalog, req));
  const params = req.queryParameters ?? [];
  for (const name of stmt.arrayParams) {
    if (!params.some((p) => p.name === name)) throw invalidQuery(`Query parameter '${name}' not found`);
  }
  const target = stmt.kind === 'SELECT' ? undefined : stmt.tables[0];
  const key = target ? `${target.projectId}:${target.datasetId}.${target.tableId}` : undefined;
  const busy = inFlight.get(catalog) ?? new Set<string>();
  inFlight.set(catalog, busy);
  if (target && key) {
    const table = catalog.table(target.projectId, target.datasetId, target.tableId);
    if (stmt.kind !== 'INSERT' && table.lastStreamedAt !== undefined && opts.now() - table.lastStreamedAt < opts.streamingBufferMs) {
      throw invalidQuery(`UPDATE or DELETE statement over table ${target.projectId}.${target.datasetId}.${target.tableId} would affect rows in the streaming buffer, which is not supported`);
    }
    // INSERT statements run concurrently; UPDATE, DELETE and MERGE conflict with each other
    // (https://cloud.google.com/bigquery/docs/data-manipulation-language#dml_statement_conflicts).
    if (stmt.kind !== 'INSERT') {
      if (busy.has(key)) throw invalidQuery(`Could not serialize access to table ${key} due to concurrent update`);
      busy.add(key);
    }
  }
  try {
    if (target && opts.dmlLatencyMs > 0) await new Promise((r) => setTimeout(r, opts.dmlLatencyMs));
    return await catalog.engine.use(async (conn) => {
      const arrays = new Set(stmt.arrayParams);
      try {
        for (const name of arrays) await createParamTable(conn, params.find((p) => p.name === name)!);
        const values = bindable(scalarValues(params, arrays), stmt.sql);
        if (stmt.merge) {
          const { target: t, targetAlias, source, on } = stmt.merge;
          const check = await conn.runAndReadAll(`SELECT 1 FROM ${t} JOIN ${source} ON ${on} GROUP BY ${targetAlias}.rowid HAVING count(*) > 1 LIMIT 1`, values);
          if (check.currentRowCount > 0) throw invalidQuery('UPDATE/MERGE must match at most one source row for each target row');
        }
        if (stmt.kind !== 'SELECT') {
          const result = await conn.run(stmt.sql, values);
          return { statementType: stmt.kind, numDmlAffectedRows: Number(result.rowsChanged), tables: stmt.tables };
        }
        const reader = await conn.runAndReadAll(stmt.sql, values);
        const types = reader.columnTypes().map(bigQueryType);
        const fields = reader.columnNames().map((name, i) => ({ name, type: types[i]!, mode: 'NULLABLE' as const }));
        const rows = reader.getRows().map((row) => ({ f: row.map((v, i) => ({ v: render(types[i]!, v, req.useInt64Timestamp) })) }));
        return { statementType: stmt.kind, schema: { fields }, rows, tables: stmt.tables };
      } catch (err) {
        throw translate(err);
      } finally {
        await dropParamTables(conn, [...arrays]).catch(() => undefined);
      }
    });
  } finally {
    if (key && stmt.kind !== 'INSERT') busy.delete(key);
  }
}
