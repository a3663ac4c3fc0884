import type { PoolClient } from 'pg';
import type { ColumnPlan, TableColumn } from '../shared/column-plan';
import type { ColumnType } from '../shared/infer-type';
import { qualified, quoteIdent, SQL_TYPE, SYSTEM_COLUMNS } from './sql';
import { schemaSql } from './tables';

/** PostgreSQL's most columns a table, dropped ones included (MaxHeapAttributeNumber). */
const MAX_TABLE_COLUMNS = 1600;

interface TableCatalog {
  columns: TableColumn[];
  /** Columns the table has used, dropped ones included. */
  attributes: number;
}

/**
 * What a writer knows of its schema between batches: whether the tables were made, and each
 * table's columns. Forgotten when the database says a table or column is not what was thought
 * (changed by hand), so the next batch reads them again.
 */
export class SchemaState {
  ready = false;
  private readonly columns = new Map<string, TableCatalog>();

  forget(): void {
    this.ready = false;
    this.columns.clear();
  }

  async ensure(client: PoolClient, schema: string): Promise<void> {
    if (this.ready) return;
    // CREATE SCHEMA IF NOT EXISTS wants CREATE on the database even when the schema exists, which a
    // role given a schema made for it (docs/connect-postgres.md) does not have: made only when missing.
    const { rowCount } = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    for (const statement of schemaSql(schema)) {
      if (rowCount === 0 || !statement.startsWith('CREATE SCHEMA')) await client.query(statement);
    }
    this.ready = true;
  }

  /** A table's columns in table order; read from the catalog once, then kept. */
  async read(client: PoolClient, schema: string, table: string): Promise<TableColumn[]> {
    return (await this.catalog(client, schema, table)).columns;
  }

  /**
   * The most property columns the table can have: `maxColumns`, or fewer when PostgreSQL's 1 600
   * columns a table would be reached first. A dropped column keeps its number (attnum) until the
   * table is rewritten by a dump and restore, so columns dropped by hand count too; the properties
   * that find no column stay in `_properties`.
   */
  async columnLimit(client: PoolClient, schema: string, table: string, maxColumns: number): Promise<number> {
    const { columns, attributes } = await this.catalog(client, schema, table);
    const properties = columns.filter((c) => !SYSTEM_COLUMNS.includes(c.name)).length;
    return Math.min(maxColumns, properties + Math.max(0, MAX_TABLE_COLUMNS - attributes));
  }

  private async catalog(client: PoolClient, schema: string, table: string): Promise<TableCatalog> {
    const known = this.columns.get(table);
    if (known) return known;
    const { rows } = await client.query<{ column_name: string; data_type: string }>(
      `SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`,
      [schema, table],
    );
    const count = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0`, [qualified(schema, table)]);
    const catalog = { columns: rows.map((r) => ({ name: r.column_name, sqlType: r.data_type })), attributes: count.rows[0]?.n ?? 0 };
    this.columns.set(table, catalog);
    return catalog;
  }

  /**
   * Runs a plan's DDL inside the batch's transaction (a failed batch leaves no column behind) and
   * returns the plan as applied. `ADD COLUMN IF NOT EXISTS`: a column someone added meanwhile is no
   * error. A `bigint` column that holds a whole number beyond 2^53 is not widened to `double
   * precision`, which would round it: the fractions then stay in `_properties`. Widening rewrites
   * the table (PostgreSQL changes a column's type so), which happens once per column, when its
   * first fraction or its first number beyond 64 bits arrives.
   */
  async apply(client: PoolClient, schema: string, table: string, plan: ColumnPlan): Promise<ColumnPlan> {
    if (plan.add.length === 0 && plan.widen.length === 0) return plan;
    this.columns.delete(table);
    const target = qualified(schema, table);
    if (plan.add.length > 0) {
      await client.query(`ALTER TABLE ${target} ${plan.add.map(({ name, type }) => `ADD COLUMN IF NOT EXISTS ${quoteIdent(name)} ${SQL_TYPE[type]}`).join(', ')}`);
    }
    let kept: Map<string, ColumnType> | undefined;
    for (const { name, type } of plan.widen) {
      const col = quoteIdent(name);
      if (type === 'float') {
        const { rowCount } = await client.query(`SELECT 1 FROM ${target} WHERE ${col} NOT BETWEEN -9007199254740991 AND 9007199254740991 LIMIT 1`);
        if (rowCount) {
          (kept ??= new Map(plan.columns)).set(name, 'integer');
          continue;
        }
      }
      await client.query(`ALTER TABLE ${target} ALTER COLUMN ${col} TYPE ${SQL_TYPE[type]} USING ${col}::${SQL_TYPE[type]}`);
    }
    return kept ? { ...plan, widen: plan.widen.filter((w) => kept.get(w.name) === w.type), columns: kept } : plan;
  }
}
