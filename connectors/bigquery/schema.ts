import type { Logger } from '../../src/core/logger';
import type { RecordKind } from '../../src/core/records/types';
import { ConfigurationError, ConnectorError, PermanentError, RetryableError } from '../errors';
import type { BigQueryApi, FieldSchema } from './client';
import { applyPlan, stateFromFields, withoutWidenings, type ColumnPlan, type TableState, type Widening } from './columns';
import type { ResolvedSettings } from './config';
import { tablePath } from './merge-sql';
import { foldName } from './names';
import { BQ_TYPE, fixedFields, tableSpec } from './tables';

/** ±(2^53−1): the whole numbers a FLOAT64 holds exactly. */
const SAFE_INTEGER = 9007199254740991;

/** Standard and legacy spellings of a type compare equal (`INT64` / `INTEGER`). */
const canonicalType = (t: string): string => ({ INT64: 'INTEGER', FLOAT64: 'FLOAT', BOOL: 'BOOLEAN' })[t.toUpperCase()] ?? t.toUpperCase();

const statusOf = (err: unknown): number | undefined => (err instanceof ConnectorError ? err.details.status : undefined);

/**
 * A 400 while making the dataset or a table (an unknown location, a refused schema) is about the
 * destination, not about the records: delivery pauses with the message instead of dead-lettering.
 */
function asConfiguration(err: unknown): unknown {
  return err instanceof PermanentError ? new ConfigurationError(err.message, { ...err.details, cause: err }) : err;
}

/**
 * The dataset and the three tables, made on first use and cached: one datasets.get and one
 * tables.get per table per writer, then nothing until a column is added (tables.patch) or a call
 * answers 404 (`forget`), after which they are looked up, and recreated if gone, on the next write.
 */
export class SchemaCache {
  private datasetReady: Promise<void> | undefined;
  private readonly states = new Map<RecordKind, Promise<TableState>>();

  constructor(
    private readonly api: BigQueryApi,
    private readonly s: ResolvedSettings,
    private readonly logger: Logger,
  ) {}

  tableName(kind: RecordKind): string {
    return kind === 'event' ? this.s.tables.events : kind === 'user' ? this.s.tables.users : this.s.tables.sessions;
  }

  ensureDataset(signal: AbortSignal): Promise<void> {
    this.datasetReady ??= this.loadDataset(signal).catch((err: unknown) => {
      this.datasetReady = undefined;
      throw asConfiguration(err);
    });
    return this.datasetReady;
  }

  table(kind: RecordKind, signal: AbortSignal): Promise<TableState> {
    let state = this.states.get(kind);
    if (!state) {
      state = this.ensureDataset(signal).then(() => this.loadTable(kind, signal).catch((err: unknown) => Promise.reject(asConfiguration(err))));
      this.states.set(kind, state);
      const pending = state;
      pending.catch(() => {
        if (this.states.get(kind) === pending) this.states.delete(kind);
      });
    }
    return state;
  }

  /** After a 404: the dataset or table is looked up (and recreated) again on the next write. */
  forget(kind?: RecordKind): void {
    if (kind) this.states.delete(kind);
    else this.states.clear();
    this.datasetReady = undefined;
  }

  /**
   * Adds a plan's columns with tables.patch and the full schema (existing columns first, unchanged),
   * then widens its INT64 columns (`widen`). A 400 from tables.patch means the table's schema moved
   * under us (another writer added columns, or someone edited it): the cache is dropped and the
   * batch retried against a fresh tables.get. Returns the plan as applied, with the state after it.
   */
  async evolve(kind: RecordKind, state: TableState, plan: ColumnPlan, signal: AbortSignal): Promise<{ state: TableState; plan: ColumnPlan }> {
    if (plan.add.length === 0 && plan.widen.length === 0) return { state, plan };
    if (plan.add.length > 0) {
      try {
        await this.api.patchSchema(this.tableName(kind), [...state.fields, ...plan.add], signal);
      } catch (err) {
        this.states.delete(kind);
        if (err instanceof PermanentError) throw new RetryableError(`the schema of ${this.tableName(kind)} changed while adding columns; retrying with the current schema (${err.message})`, { ...err.details, cause: err });
        throw err;
      }
    }
    let kept = new Set<string>();
    try {
      kept = await this.widen(kind, plan.widen, signal);
    } catch (err) {
      // The columns were added: the next attempt starts from a fresh tables.get.
      this.states.delete(kind);
      throw err;
    }
    const applied = withoutWidenings(plan, kept);
    const next = applyPlan(state, applied, kept);
    this.states.set(kind, Promise.resolve(next));
    return { state: next, plan: applied };
  }

  /**
   * INT64 → FLOAT64 (a fraction arrived) or → BIGNUMERIC (a whole number beyond 64 bits), by
   * `ALTER COLUMN … SET DATA TYPE`, the one way BigQuery changes a column's type (tables.patch
   * refuses it: https://cloud.google.com/bigquery/docs/managing-table-schemas#change_a_columns_data_type);
   * stored integers keep their values. A column holding a whole number beyond 2^53 is not widened
   * to FLOAT64, which would round it (one query reads that column once, the first time only); nor is
   * one BigQuery refuses to alter. Both are logged and stay INT64 from then on: fractions for them
   * leave the cell NULL and stay in `_properties`. Returns the columns kept as they were.
   */
  private async widen(kind: RecordKind, widen: readonly Widening[], signal: AbortSignal): Promise<Set<string>> {
    const kept = new Set<string>();
    if (widen.length === 0) return kept;
    const table = this.tableName(kind);
    const path = tablePath(this.s.projectId, this.s.dataset, table);
    const toFloat = widen.filter((w) => w.type === 'float');
    if (toFloat.length > 0) {
      const checks = toFloat.map((w, i) => `COUNTIF(\`${w.column}\` NOT BETWEEN -${SAFE_INTEGER} AND ${SAFE_INTEGER}) AS u${i}`);
      const [row] = await this.api.query(`SELECT ${checks.join(', ')} FROM ${path}`, [], signal, `check of ${table} before widening`);
      toFloat.forEach((w, i) => {
        if (row?.[`u${i}`] !== '0') kept.add(w.column);
      });
      if (kept.size > 0) this.logger.warn({ table, columns: [...kept] }, `bigquery: INT64 columns of ${table} hold whole numbers beyond 2^53 and stay INT64 (FLOAT64 would round them); fractions for them stay in _properties`);
    }
    const alter = widen.filter((w) => !kept.has(w.column));
    if (alter.length === 0) return kept;
    const sql = `ALTER TABLE ${path} ${alter.map((w) => `ALTER COLUMN \`${w.column}\` SET DATA TYPE ${BQ_TYPE[w.type]}`).join(', ')}`;
    try {
      await this.api.query(sql, [], signal, `ALTER TABLE ${table}`);
    } catch (err) {
      if (!(err instanceof PermanentError)) throw err;
      for (const w of alter) kept.add(w.column);
      this.logger.warn({ table, columns: alter.map((w) => w.column), err: err.message }, `bigquery: BigQuery refused to widen columns of ${table}; they stay as they are and values that do not fit them stay in _properties`);
    }
    return kept;
  }

  private async loadDataset(signal: AbortSignal): Promise<void> {
    const where = `${this.s.projectId}:${this.s.dataset}`;
    let location: string;
    try {
      location = (await this.api.getDataset(signal)).location;
    } catch (err) {
      if (statusOf(err) !== 404) throw err;
      try {
        await this.api.createDataset(signal);
        return;
      } catch (created) {
        if (statusOf(created) === 404) throw new ConfigurationError(`cannot create dataset ${where}: project ${this.s.projectId} was not found or the BigQuery API is not enabled for it`, { status: 404, cause: created });
        if (statusOf(created) !== 409) throw created;
        location = (await this.api.getDataset(signal)).location;
      }
    }
    if (location.toLowerCase() !== this.s.location.toLowerCase()) {
      throw new ConfigurationError(`dataset ${where} is in location ${location}, but this destination's location is ${this.s.location}: set "location": "${location}" or use another dataset`, { reason: 'wrongLocation' });
    }
  }

  private async loadTable(kind: RecordKind, signal: AbortSignal): Promise<TableState> {
    const name = this.tableName(kind);
    let fields: FieldSchema[];
    try {
      fields = (await this.api.getTable(name, signal)).fields;
    } catch (err) {
      if (statusOf(err) !== 404) throw err;
      try {
        await this.api.createTable(name, tableSpec(kind), signal);
        return stateFromFields(kind, tableSpec(kind).fields);
      } catch (created) {
        if (statusOf(created) !== 409) throw created;
        fields = (await this.api.getTable(name, signal)).fields;
      }
    }
    return this.withFixedColumns(kind, name, fields, signal);
  }

  /** A table made by someone else must have Tributary's columns with their types; missing ones are added. */
  private async withFixedColumns(kind: RecordKind, name: string, fields: FieldSchema[], signal: AbortSignal): Promise<TableState> {
    const byName = new Map(fields.map((f) => [foldName(f.name), f]));
    const missing: FieldSchema[] = [];
    for (const fixed of fixedFields(kind)) {
      const found = byName.get(foldName(fixed.name));
      if (!found) missing.push({ ...fixed, mode: 'NULLABLE' });
      else if (canonicalType(found.type) !== canonicalType(fixed.type)) {
        throw new ConfigurationError(`column ${found.name} of table ${this.s.dataset}.${name} is ${found.type}; Tributary needs ${fixed.type} there. Rename the table or the column.`, { reason: 'schemaMismatch' });
      }
    }
    if (missing.length > 0) await this.api.patchSchema(name, [...fields, ...missing], signal);
    return stateFromFields(kind, [...fields, ...missing]);
  }
}
