import type { PoolClient } from 'pg';
import type { ColumnPlan, TableColumn } from '../shared/column-plan';
import type { ColumnType } from '../shared/infer-type';
import { qualified, quoteIdent, SQL_TYPE } from './sql';
import { schemaSql } from './tables';

/**
 * What a writer knows of its schema between batches: whether the tables were made, and each
 * table's columns. Forgotten when the database says a table or column is not what was thought
 * (changed by hand), so the next batch reads them again.
 */
export class SchemaState {
  ready = false;
  private readonly columns = new Map<string, TableColumn[]>();

  forget(): void {
    this.ready = false;
    this.columns.clear();
  }

  async ensure(client: PoolClient, schema: string): Promise<void> {
    if (this.ready) return;
    for (const statement of schemaSql(schema)) await client.query(statement);
    this.ready = true;
  }

  /** A table's columns in table order; read from the catalog once, then kept. */
  async read(client: PoolClient, schema: string, table: string): Promise<TableColumn[]> {
    const known = this.columns.get(table);
    if (known) return known;
    const { rows } = await client.query<{ column_name: string; data_type: string }>(
      `SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`,
      [schema, table],
    );
    const columns = rows.map((r) => ({ name: r.column_name, sqlType: r.data_type }));
    this.columns.set(table, columns);
    return columns;
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
