import { Engine, quote, schemaOf, tableRef } from './engine';
import { checkWidening, type AlterColumns } from './ddl';
import { FakeApiError, invalid, invalidQuery, notFound } from './errors';
import { DUCKDB_TYPE, parseFields, type FakeField } from './names';

export interface FakeTable {
  projectId: string;
  datasetId: string;
  tableId: string;
  fields: FakeField[];
  timePartitioning?: { type: string; field?: string };
  clustering?: { fields: string[] };
  creationTime: number;
  lastModifiedTime: number;
  /** insertId → when it was first seen; rows with a known id are dropped (best-effort dedup, here exact). */
  insertIds: Map<string, number>;
  /** When the last streamed row arrived: DML over rows still in the streaming buffer is refused. */
  lastStreamedAt: number | undefined;
  /** Lower-cased column → when insertAll starts accepting it (see `schemaPropagationMs`). */
  visibleAt: Map<string, number>;
  /** Lower-cased column whose type was changed → the type insertAll still converts its values to, and until when. */
  streamingTypes: Map<string, { type: string; until: number }>;
  /** Times of recent metadata updates, for the per-table update rate limit. */
  updates: number[];
  /** When BigQuery deletes the table (`expirationTime`, epoch ms). */
  expirationTime?: number;
}

export interface FakeDataset {
  projectId: string;
  datasetId: string;
  location: string;
  creationTime: number;
  tables: Map<string, FakeTable>;
}

export interface CatalogOptions {
  /** Metadata updates (tables.patch/update) allowed per table per window. Google: 5 per 10 s. */
  tableUpdateLimit: { count: number; windowMs: number };
  /** How long insertAll keeps refusing a column added by tables.patch (Google: "up to several minutes"). Default 0. */
  schemaPropagationMs: number;
  now: () => number;
}

const ID = /^[A-Za-z0-9_]{1,1024}$/;
const PARTITION_TYPES = new Set(['DAY', 'HOUR', 'MONTH', 'YEAR']);
const CLUSTERABLE = new Set(['STRING', 'INTEGER', 'BOOLEAN', 'TIMESTAMP']);

/** Datasets and tables: metadata here, rows in DuckDB. */
export class Catalog {
  private readonly datasets = new Map<string, FakeDataset>();

  constructor(
    readonly engine: Engine,
    private readonly opts: CatalogOptions,
  ) {}

  dataset(projectId: string, datasetId: string): FakeDataset {
    const ds = this.datasets.get(schemaOf(projectId, datasetId));
    if (!ds) throw notFound(`Dataset ${projectId}:${datasetId}`);
    return ds;
  }

  hasDataset(projectId: string, datasetId: string): boolean {
    return this.datasets.has(schemaOf(projectId, datasetId));
  }

  table(projectId: string, datasetId: string, tableId: string): FakeTable {
    const t = this.dataset(projectId, datasetId).tables.get(tableId);
    if (!t) throw notFound(`Table ${projectId}:${datasetId}.${tableId}`);
    return t;
  }

  async createDataset(projectId: string, body: Record<string, unknown>): Promise<FakeDataset> {
    const ref = (body.datasetReference ?? {}) as { datasetId?: unknown };
    const datasetId = String(ref.datasetId ?? '');
    if (!ID.test(datasetId)) throw invalid(`Invalid dataset ID "${datasetId}". Dataset IDs must be alphanumeric (plus underscores) and must be at most 1024 characters long.`);
    if (this.hasDataset(projectId, datasetId)) throw new FakeApiError(409, 'duplicate', `Already Exists: Dataset ${projectId}:${datasetId}`);
    const location = typeof body.location === 'string' && body.location !== '' ? body.location : 'US';
    await this.engine.use((c) => c.run(`CREATE SCHEMA ${quote(schemaOf(projectId, datasetId))}`));
    const ds: FakeDataset = { projectId, datasetId, location, creationTime: this.opts.now(), tables: new Map() };
    this.datasets.set(schemaOf(projectId, datasetId), ds);
    return ds;
  }

  async deleteDataset(projectId: string, datasetId: string, deleteContents: boolean): Promise<void> {
    const ds = this.dataset(projectId, datasetId);
    if (ds.tables.size > 0 && !deleteContents) throw invalid(`Dataset ${projectId}:${datasetId} is still in use`);
    await this.engine.use((c) => c.run(`DROP SCHEMA ${quote(schemaOf(projectId, datasetId))} CASCADE`));
    this.datasets.delete(schemaOf(projectId, datasetId));
  }

  async createTable(projectId: string, datasetId: string, body: Record<string, unknown>): Promise<FakeTable> {
    const ds = this.dataset(projectId, datasetId);
    const tableId = String(((body.tableReference ?? {}) as { tableId?: unknown }).tableId ?? '');
    if (!ID.test(tableId)) throw invalid(`Invalid table ID "${tableId}".`);
    if (ds.tables.has(tableId)) throw new FakeApiError(409, 'duplicate', `Already Exists: Table ${projectId}:${datasetId}.${tableId}`);
    const fields = parseFields(body.schema);
    const table: FakeTable = { projectId, datasetId, tableId, fields, creationTime: this.opts.now(), lastModifiedTime: this.opts.now(), insertIds: new Map(), lastStreamedAt: undefined, visibleAt: new Map(), streamingTypes: new Map(), updates: [] };
    const tp = body.timePartitioning as { type?: unknown; field?: unknown } | undefined;
    if (tp) table.timePartitioning = checkPartitioning(fields, tp);
    const cl = body.clustering as { fields?: unknown } | undefined;
    if (cl) table.clustering = checkClustering(fields, cl);
    if (body.expirationTime !== undefined) {
      const at = Number(body.expirationTime);
      if (!Number.isFinite(at)) throw invalid(`Invalid value for expirationTime: ${String(body.expirationTime)}`);
      table.expirationTime = at;
    }
    const defs = fields.map((f) => `${quote(f.name)} ${DUCKDB_TYPE[f.type]}${f.mode === 'REQUIRED' ? ' NOT NULL' : ''}`);
    // DuckDB needs a column; BigQuery allows a table without schema, which accepts no rows.
    const ddl = `CREATE TABLE ${tableRef(projectId, datasetId, tableId)} (${defs.length > 0 ? defs.join(', ') : '"__no_schema" BOOLEAN'})`;
    await this.engine.use((c) => c.run(ddl));
    ds.tables.set(tableId, table);
    return table;
  }

  /** Deletes the tables whose expiration time has passed, as BigQuery does on its own. */
  async sweepExpired(): Promise<void> {
    const now = this.opts.now();
    for (const ds of this.datasets.values()) {
      for (const t of [...ds.tables.values()]) if (t.expirationTime !== undefined && t.expirationTime <= now) await this.deleteTable(t.projectId, t.datasetId, t.tableId);
    }
  }

  async deleteTable(projectId: string, datasetId: string, tableId: string): Promise<void> {
    this.table(projectId, datasetId, tableId);
    await this.engine.use((c) => c.run(`DROP TABLE ${tableRef(projectId, datasetId, tableId)}`));
    this.dataset(projectId, datasetId).tables.delete(tableId);
  }

  /**
   * tables.patch / tables.update with a schema, under the rules of
   * https://cloud.google.com/bigquery/docs/managing-table-schemas: columns may be added (NULLABLE
   * only) and REQUIRED relaxed to NULLABLE; none may be removed, renamed or change type.
   */
  async patchTable(projectId: string, datasetId: string, tableId: string, body: Record<string, unknown>): Promise<FakeTable> {
    const table = this.table(projectId, datasetId, tableId);
    this.countUpdate(table);
    const where = `Provided Schema does not match Table ${projectId}:${datasetId}.${tableId}.`;
    if (body.timePartitioning !== undefined && JSON.stringify(checkPartitioning(table.fields, body.timePartitioning as Record<string, unknown>)) !== JSON.stringify(table.timePartitioning)) {
      throw invalid(`Cannot change partitioning spec for ${projectId}:${datasetId}.${tableId}.`);
    }
    if (body.schema === undefined) {
      if (body.clustering !== undefined) table.clustering = checkClustering(table.fields, body.clustering as Record<string, unknown>);
      return table;
    }
    const next = parseFields(body.schema);
    const byName = new Map(next.map((f) => [f.name.toLowerCase(), f]));
    for (const old of table.fields) {
      const f = byName.get(old.name.toLowerCase());
      if (!f) throw invalid(`${where} Field ${old.name} is missing in new schema`);
      if (f.type !== old.type) throw invalid(`${where} Field ${old.name} has changed type from ${old.type} to ${f.type}`);
      if (old.mode === 'NULLABLE' && f.mode === 'REQUIRED') throw invalid(`${where} Field ${old.name} has changed mode from NULLABLE to REQUIRED`);
    }
    const known = new Set(table.fields.map((f) => f.name.toLowerCase()));
    const added = next.filter((f) => !known.has(f.name.toLowerCase()));
    const required = added.find((f) => f.mode === 'REQUIRED');
    if (required) throw invalid(`${where} Cannot add required fields to an existing schema. (field: ${required.name})`);
    await this.engine.use(async (c) => {
      for (const f of added) await c.run(`ALTER TABLE ${tableRef(projectId, datasetId, tableId)} ADD COLUMN ${quote(f.name)} ${DUCKDB_TYPE[f.type]}`);
      for (const old of table.fields) {
        if (old.mode === 'REQUIRED' && byName.get(old.name.toLowerCase())!.mode === 'NULLABLE') {
          await c.run(`ALTER TABLE ${tableRef(projectId, datasetId, tableId)} ALTER COLUMN ${quote(old.name)} DROP NOT NULL`);
        }
      }
    });
    const visibleAt = this.opts.now() + this.opts.schemaPropagationMs;
    for (const f of added) table.visibleAt.set(f.name.toLowerCase(), visibleAt);
    table.fields = table.fields.map((old) => ({ ...byName.get(old.name.toLowerCase())!, name: old.name })).concat(added);
    if (body.clustering !== undefined) table.clustering = checkClustering(table.fields, body.clustering as Record<string, unknown>);
    table.lastModifiedTime = this.opts.now();
    return table;
  }

  /**
   * ALTER TABLE … ALTER COLUMN … SET DATA TYPE (ddl.ts has the rules). All changes are checked
   * before any is applied. Like an added column, a changed one reaches streaming only after
   * `schemaPropagationMs`: until then insertAll converts its values to the old type.
   */
  async alterColumnTypes(name: { projectId: string; datasetId: string; tableId: string }, changes: AlterColumns['changes']): Promise<void> {
    const table = this.table(name.projectId, name.datasetId, name.tableId);
    const planned: Array<{ index: number; type: string }> = [];
    for (const change of changes) {
      const index = table.fields.findIndex((f) => f.name.toLowerCase() === change.column.toLowerCase());
      if (index < 0) {
        if (change.ifExists) continue;
        throw invalidQuery(`Column ${change.column} not found in table ${name.projectId}.${name.datasetId}.${name.tableId}`);
      }
      const field = table.fields[index]!;
      planned.push({ index, type: checkWidening(name, field.name, field.type, change.type) });
    }
    this.countUpdate(table);
    const until = this.opts.now() + this.opts.schemaPropagationMs;
    await this.engine.use(async (c) => {
      for (const { index, type } of planned) {
        const field = table.fields[index]!;
        if (field.type === type) continue;
        await c.run(`ALTER TABLE ${tableRef(name.projectId, name.datasetId, name.tableId)} ALTER COLUMN ${quote(field.name)} SET DATA TYPE ${DUCKDB_TYPE[type]}`);
        if (this.opts.schemaPropagationMs > 0) table.streamingTypes.set(field.name.toLowerCase(), { type: field.type, until });
        table.fields[index] = { ...field, type };
      }
    });
    table.lastModifiedTime = this.opts.now();
  }

  /** https://cloud.google.com/bigquery/quotas#standard_tables: 5 table metadata update operations per 10 seconds per table. */
  private countUpdate(table: FakeTable): void {
    const now = this.opts.now();
    const { count, windowMs } = this.opts.tableUpdateLimit;
    table.updates = table.updates.filter((t) => now - t < windowMs);
    if (table.updates.length >= count) {
      throw new FakeApiError(403, 'rateLimitExceeded', 'Exceeded rate limits: too many table update operations for this table. For more information, see https://cloud.google.com/bigquery/docs/troubleshoot-quotas');
    }
    table.updates.push(now);
  }
}

function checkPartitioning(fields: readonly FakeField[], raw: Record<string, unknown>): { type: string; field?: string } {
  const type = String(raw.type ?? 'DAY').toUpperCase();
  if (!PARTITION_TYPES.has(type)) throw invalid(`Invalid time partitioning type: ${type}`);
  if (raw.field === undefined) return { type };
  const field = fields.find((f) => f.name.toLowerCase() === String(raw.field).toLowerCase());
  if (!field) throw invalid(`The field specified for time partitioning can only be of type TIMESTAMP, DATE or DATETIME. The type found is: MISSING (field: ${String(raw.field)}).`);
  if (field.type !== 'TIMESTAMP') throw invalid(`The field specified for time partitioning can only be of type TIMESTAMP, DATE or DATETIME. The type found is: ${field.type}.`);
  return { type, field: field.name };
}

function checkClustering(fields: readonly FakeField[], raw: Record<string, unknown>): { fields: string[] } {
  const names = Array.isArray(raw.fields) ? raw.fields.map(String) : [];
  if (names.length > 4) throw invalid('Too many clustering fields: at most 4 are allowed.');
  for (const name of names) {
    const f = fields.find((x) => x.name.toLowerCase() === name.toLowerCase());
    if (!f) throw invalid(`The field specified for clustering cannot be found in the schema. Invalid field: ${name}.`);
    if (!CLUSTERABLE.has(f.type)) throw invalid(`Field ${name} is of type ${f.type} which is not supported for clustering.`);
  }
  return { fields: names };
}
