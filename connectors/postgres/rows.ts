import { stringifyExactJson } from '../../src/core/records/exact-json';
import type { Properties, RecordKind, RequestContext } from '../../src/core/records/types';
import { cellText, type ColumnPlan } from '../shared/column-plan';
import { ownValue } from '../shared/infer-type';
import { contextValue, CONTEXT_COLUMN, PROPERTIES_COLUMN, type ReservedColumn, type ReservedValues } from '../shared/reserved-columns';
import { jsonbText } from './copy-text';
import { fitRow } from './row-size';
import { SQL_TYPE } from './sql';
import type { StagedColumn, StagedRow } from './stage';
import { fixedColumns } from './tables';

/** Maps rows of one kind to staged cells, in the order of `columns`. */
export interface RowMapper {
  /** The fixed columns, then the property columns the batch touches. */
  columns: StagedColumn[];
  row(reserved: ReservedValues, context: RequestContext | undefined, properties: Properties): StagedRow;
}

export function createRowMapper(kind: RecordKind, plan: ColumnPlan, touched: readonly string[]): RowMapper {
  const fixed = fixedColumns(kind);
  const typed = touched.map((name) => ({ name, type: plan.columns.get(name)! }));
  const columns = [...fixed, ...typed.map(({ name, type }) => ({ name, sqlType: SQL_TYPE[type] }))];
  const sqlTypes = columns.map((c) => c.sqlType);
  return {
    columns,
    row(reserved, context, properties) {
      const cells: Array<string | null> = [];
      for (const { name } of fixed) {
        if (name === CONTEXT_COLUMN) {
          const ctx = contextValue(context);
          cells.push(ctx ? jsonbText(JSON.stringify(ctx)) : null);
        } else if (name === PROPERTIES_COLUMN) {
          cells.push(jsonbText(stringifyExactJson(properties)));
        } else {
          cells.push(reserved[name as ReservedColumn] ?? null);
        }
      }
      for (const { name, type } of typed) {
        const cell = cellText(type, ownValue(properties, name));
        cells.push(cell !== null && type === 'json' ? jsonbText(cell) : cell);
      }
      return fitRow(sqlTypes, cells, fixed.length);
    },
  };
}
