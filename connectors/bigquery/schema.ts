import type { RecordKind } from '../../src/core/records/types';
import { ConfigurationError, ConnectorError, PermanentError, RetryableError } from '../errors';
import type { BigQueryApi, FieldSchema } from './client';
import { applyPlan, stateFromFields, type ColumnPlan, type TableState } from './columns';
import type { ResolvedSettings } from './config';
import { foldName } from './names';
import { fixedFields, tableSpec } from './tables';

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
   * Adds a plan's columns with tables.patch and the full schema (existing columns first, unchanged).
   * A 400 here means the table's schema moved under us (another writer added columns, or someone
   * edited it): the cache is dropped and the batch retried against a fresh tables.get.
   */
  async evolve(kind: RecordKind, state: TableState, plan: ColumnPlan, signal: AbortSignal): Promise<TableState> {
    if (plan.add.length === 0) return state;
    try {
      await this.api.patchSchema(this.tableName(kind), [...state.fields, ...plan.add], signal);
    } catch (err) {
      this.states.delete(kind);
      if (err instanceof PermanentError) throw new RetryableError(`the schema of ${this.tableName(kind)} changed while adding columns; retrying with the current schema (${err.message})`, { ...err.details, cause: err });
      throw err;
    }
    const next = applyPlan(state, plan);
    this.states.set(kind, Promise.resolve(next));
    return next;
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
