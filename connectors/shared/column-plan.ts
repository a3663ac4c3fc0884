import type { JsonValue, Properties } from '../../src/core/records/types';
import { columnValue, inferType, widen as widenType, type ColumnType } from './infer-type';

/** A column as the database reports it. */
export interface TableColumn {
  name: string;
  sqlType: string;
}

/** The schema changes a batch needs, and the property columns it can write afterwards. */
export interface ColumnPlan {
  /** New columns, in the order their properties were first seen. */
  add: Array<{ name: string; type: ColumnType }>;
  /** Existing integer columns that now receive fractions (widened to float) or whole numbers beyond 64 bits (to hugeint). */
  widen: Array<{ name: string; type: ColumnType }>;
  /** Every property column Tributary writes after the plan, by exact name. */
  columns: ReadonlyMap<string, ColumnType>;
}

/** How a SQL database names and types columns: what differs between DuckDB and PostgreSQL. */
export interface ColumnRules {
  /** Columns that are never property columns (the reserved ones, `_context`, `_properties`). */
  system: readonly string[];
  /** The form two names share when the database takes them for one column (DuckDB folds ASCII case). */
  fold(name: string): string;
  /** Whether the database can take the name as a column at all. */
  usable(name: string): boolean;
  /** The column type a column of this SQL type holds, or `undefined` for one Tributary does not write. */
  typeOf(sqlType: string): ColumnType | undefined;
}

interface Slot {
  name: string;
  /** `undefined`: a system column, or a column of a type Tributary does not write. */
  type: ColumnType | undefined;
  added: boolean;
}

/**
 * Decides, without I/O, how a table's columns follow a batch's properties (each SQL connector's
 * index.ts states the rules as users read them). Rows are visited in batch order, so the first
 * spelling and the first type of a new property win.
 */
export function planColumns(rules: ColumnRules, table: readonly TableColumn[], rows: readonly Properties[], maxColumns: number): ColumnPlan {
  const slots = new Map<string, Slot>();
  for (const name of rules.system) slots.set(rules.fold(name), { name, type: undefined, added: false });
  let propertyColumns = 0;
  for (const column of table) {
    if (rules.system.includes(column.name)) continue;
    slots.set(rules.fold(column.name), { name: column.name, type: rules.typeOf(column.sqlType), added: false });
    propertyColumns++;
  }

  // A batch repeats the same few names in every row: each is folded once (a regex replace for DuckDB).
  const foldedNames = new Map<string, string>();
  const foldOnce = (name: string): string => {
    let folded = foldedNames.get(name);
    if (folded === undefined) foldedNames.set(name, (folded = rules.fold(name)));
    return folded;
  };
  const widen = new Map<string, ColumnType>();
  const added: Slot[] = [];
  for (const row of rows) {
    for (const name of Object.keys(row)) {
      const type = inferType(row[name]!);
      if (type === undefined) continue;
      const slot = slots.get(foldOnce(name));
      if (slot) {
        if (slot.name !== name || slot.type === undefined) continue;
        const wider = slot.type === 'integer' ? widenType('integer', type) : undefined;
        if (wider !== undefined && wider !== 'integer') {
          slot.type = wider;
          if (!slot.added) widen.set(name, wider);
        }
        continue;
      }
      if (!rules.usable(name) || propertyColumns >= maxColumns) continue;
      const fresh: Slot = { name, type, added: true };
      slots.set(foldOnce(name), fresh);
      added.push(fresh);
      propertyColumns++;
    }
  }

  const columns = new Map<string, ColumnType>();
  for (const slot of slots.values()) {
    if (slot.type !== undefined && !rules.system.includes(slot.name)) columns.set(slot.name, slot.type);
  }
  return { add: added.map((s) => ({ name: s.name, type: s.type! })), widen: [...widen].map(([name, type]) => ({ name, type })), columns };
}

/**
 * The staged text of one cell, cast to the column's SQL type on insert; `null` when the property
 * is absent or null, or when its value does not fit the column (that value lives on in
 * `_properties`). Numbers use JavaScript's shortest round-trip form, which SQL databases parse
 * back exactly; a bigint its digits.
 */
export function cellText(column: ColumnType, value: JsonValue | undefined): string | null {
  const cell = columnValue(column, value);
  return cell === undefined ? null : String(cell);
}

/** The property columns some row gives a value to, in table order: the only ones worth staging. */
export function touchedColumns(plan: ColumnPlan, rows: readonly Properties[]): string[] {
  const touched = new Set<string>();
  for (const row of rows) {
    for (const name of Object.keys(row)) if (row[name] !== null && plan.columns.has(name)) touched.add(name);
  }
  return [...plan.columns.keys()].filter((name) => touched.has(name));
}
