import type { Properties, RecordKind } from '../../src/core/records/types';
import { inferType, type ColumnType } from '../shared/infer-type';
import type { FieldSchema } from './client';
import { baseColumnName, foldName, hashedColumnName, ownerDescription, ownerOf } from './names';
import { BQ_TYPE, columnTypeOf, fixedFields } from './tables';

/** Where a property is written: its column, and the type of values that column takes (undefined: a type Tributary does not write). */
export interface PropertyColumn {
  column: string;
  type: ColumnType | undefined;
}

/** What Tributary knows of a table's schema. */
export interface TableState {
  fields: FieldSchema[];
  /** Property name → its column. */
  owners: Map<string, PropertyColumn>;
  /** Every column name, folded: a new column must not equal any of them in any case. */
  taken: Set<string>;
  propertyColumns: number;
}

export function stateFromFields(kind: RecordKind, fields: readonly FieldSchema[]): TableState {
  const fixed = new Set(fixedFields(kind).map((f) => f.name));
  const state: TableState = { fields: [...fields], owners: new Map(), taken: new Set(), propertyColumns: 0 };
  for (const f of fields) {
    state.taken.add(foldName(f.name));
    if (fixed.has(f.name) || f.name.startsWith('_')) continue;
    state.owners.set(ownerOf(f), { column: f.name, type: columnTypeOf(f.type) });
    state.propertyColumns++;
  }
  return state;
}

export interface ColumnPlan {
  /** New NULLABLE columns, in the order their properties were first seen. */
  add: FieldSchema[];
  /** Property → column, for every property the rows can write (existing and new columns). */
  columns: ReadonlyMap<string, PropertyColumn>;
}

/**
 * Decides, without I/O, which columns a batch needs. Rows are visited in order, so a new
 * property's first non-null value decides its column's type. A property gets its base name
 * (names.ts), or the hashed name when another property's column has the base name in any case;
 * beyond `maxColumns` property columns, or when even the hashed name is taken, the property has no
 * column and lives in `_properties` only. `null` never creates a column.
 */
export function planColumns(state: TableState, rows: readonly Properties[], maxColumns: number): ColumnPlan {
  const columns = new Map(state.owners);
  const taken = new Set(state.taken);
  const add: FieldSchema[] = [];
  let count = state.propertyColumns;
  for (const row of rows) {
    for (const property of Object.keys(row)) {
      if (columns.has(property)) continue;
      const type = inferType(row[property]!);
      const description = ownerDescription(property);
      if (type === undefined || description === undefined || count >= maxColumns) continue;
      const column = [baseColumnName(property), hashedColumnName(property)].find((c) => !taken.has(foldName(c)));
      if (!column) continue;
      taken.add(foldName(column));
      columns.set(property, { column, type });
      add.push({ name: column, type: BQ_TYPE[type], mode: 'NULLABLE', description });
      count++;
    }
  }
  return { add, columns };
}

/** The state after the plan's columns were added. */
export function applyPlan(state: TableState, plan: ColumnPlan): TableState {
  if (plan.add.length === 0) return state;
  return { fields: [...state.fields, ...plan.add], owners: new Map(plan.columns), taken: new Set([...state.taken, ...plan.add.map((f) => foldName(f.name))]), propertyColumns: state.propertyColumns + plan.add.length };
}
