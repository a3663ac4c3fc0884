import type { Properties, RecordKind } from '../../src/core/records/types';
import { inferType, widen, type ColumnType } from '../shared/infer-type';
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
  /** Folded names of INT64 columns that stay INT64 whatever arrives (they hold a whole number a FLOAT64 would round, or BigQuery refused to widen them). */
  keepType: Set<string>;
}

export function stateFromFields(kind: RecordKind, fields: readonly FieldSchema[]): TableState {
  const fixed = new Set(fixedFields(kind).map((f) => f.name));
  const state: TableState = { fields: [...fields], owners: new Map(), taken: new Set(), propertyColumns: 0, keepType: new Set() };
  for (const f of fields) {
    state.taken.add(foldName(f.name));
    if (fixed.has(f.name) || f.name.startsWith('_')) continue;
    state.owners.set(ownerOf(f), { column: f.name, type: columnTypeOf(f.type) });
    state.propertyColumns++;
  }
  return state;
}

/** An existing INT64 column that a batch's values widen: to FLOAT64 for a fraction, to BIGNUMERIC for a whole number beyond 64 bits. */
export interface Widening {
  column: string;
  type: ColumnType;
}

export interface ColumnPlan {
  /** New NULLABLE columns, in the order their properties were first seen. */
  add: FieldSchema[];
  /** Existing columns whose type changes (ALTER COLUMN SET DATA TYPE), before the rows are written. */
  widen: Widening[];
  /** Property → column, for every property the rows can write (existing and new columns). */
  columns: ReadonlyMap<string, PropertyColumn>;
}

/**
 * Decides, without I/O, which columns a batch needs. Rows are visited in order, so a new
 * property's first non-null value decides its column's type. A property gets its base name
 * (names.ts), or the hashed name when another property's column has the base name in any case;
 * beyond `maxColumns` property columns, or when even the hashed name is taken, the property has no
 * column and lives in `_properties` only. `null` never creates a column. An integer column that
 * meets a fraction widens to float, or to hugeint for a whole number beyond 64 bits (`widen` in
 * shared/infer-type.ts): a new one is created with the wider type, an existing one is altered,
 * unless it is in `keepType`.
 */
export function planColumns(state: TableState, rows: readonly Properties[], maxColumns: number): ColumnPlan {
  const columns = new Map(state.owners);
  const taken = new Set(state.taken);
  const add: FieldSchema[] = [];
  const widened = new Map<string, ColumnType>();
  let count = state.propertyColumns;
  for (const row of rows) {
    for (const property of Object.keys(row)) {
      const known = columns.get(property);
      if (known) {
        const wider = known.type === 'integer' ? widenedType(row[property]!) : undefined;
        if (wider === undefined || state.keepType.has(foldName(known.column))) continue;
        columns.set(property, { column: known.column, type: wider });
        const fresh = add.find((f) => f.name === known.column);
        if (fresh) fresh.type = BQ_TYPE[wider];
        else widened.set(known.column, wider);
        continue;
      }
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
  return { add, widen: [...widened].map(([column, type]) => ({ column, type })), columns };
}

/** The type an integer column must take for this value, when it is wider than integer. */
function widenedType(value: Properties[string]): ColumnType | undefined {
  const type = inferType(value);
  const wider = type === undefined ? undefined : widen('integer', type);
  return wider === 'float' || wider === 'hugeint' ? wider : undefined;
}

/**
 * The plan without some of its widenings (a column that must stay INT64): those columns keep their
 * integer type, so a fraction for them leaves the cell NULL and stays in `_properties`.
 */
export function withoutWidenings(plan: ColumnPlan, columns: ReadonlySet<string>): ColumnPlan {
  if (columns.size === 0) return plan;
  const kept = new Map(plan.columns);
  for (const [property, pc] of kept) if (columns.has(pc.column)) kept.set(property, { column: pc.column, type: 'integer' });
  return { add: plan.add, widen: plan.widen.filter((w) => !columns.has(w.column)), columns: kept };
}

/** The state after the plan's columns were added and widened; `keep` names columns that must stay as they are from now on. */
export function applyPlan(state: TableState, plan: ColumnPlan, keep: Iterable<string> = []): TableState {
  const keepType = new Set([...state.keepType, ...[...keep].map(foldName)]);
  if (plan.add.length === 0 && plan.widen.length === 0) return keepType.size === state.keepType.size ? state : { ...state, keepType };
  const types = new Map(plan.widen.map((w) => [w.column, BQ_TYPE[w.type]]));
  return {
    fields: [...state.fields.map((f) => (types.has(f.name) ? { ...f, type: types.get(f.name)! } : f)), ...plan.add],
    owners: new Map(plan.columns),
    taken: new Set([...state.taken, ...plan.add.map((f) => foldName(f.name))]),
    propertyColumns: state.propertyColumns + plan.add.length,
    keepType,
  };
}
