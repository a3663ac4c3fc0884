import type { JsonValue, Properties } from '../../src/core/records/types';
import type { MergedChange, UpsertKind } from '../shared/coalesce-upserts';
import { columnValue, ownValue } from '../shared/infer-type';
import { CONTEXT_COLUMN, contextValue, PROPERTIES_COLUMN, reservedValuesOfChange, type ReservedColumn } from '../shared/reserved-columns';
import type { ColumnPlan, PropertyColumn } from './columns';
import { jsonColumnText } from './json-text';
import type { MergeColumn } from './merge-sql';
import { BQ_TYPE, fixedFields } from './tables';

/** The columns a MERGE writes: Tributary's own, then the property columns the batch touches. */
export interface MergeLayout {
  columns: MergeColumn[];
  /** Property name → its column, in the order of the property columns in `columns`. */
  properties: Map<string, PropertyColumn>;
}

/**
 * Property columns any row's stored or new state mentions: assigning them makes each row's typed
 * columns match its `_properties` (a cleared property's column becomes NULL). Columns no row
 * mentions are left out, so a MERGE's size follows the batch, not the table's width.
 */
export function mergeLayout(kind: UpsertKind, plan: ColumnPlan, mentioned: Iterable<string>): MergeLayout {
  const properties = new Map<string, PropertyColumn>();
  for (const name of mentioned) {
    const pc = plan.columns.get(name);
    if (pc?.type !== undefined) properties.set(name, pc);
  }
  const fixed = fixedFields(kind).map((f) => ({
    name: f.name,
    type: f.type,
    // A session update without `_uid`, or any update without request context, keeps the stored one.
    keepStored: f.name === CONTEXT_COLUMN || (kind === 'session' && f.name === '_uid'),
  }));
  return { columns: [...fixed, ...[...properties.values()].map((pc) => ({ name: pc.column, type: BQ_TYPE[pc.type!] }))], properties };
}

/** A STRUCT field as the REST API takes it: text, or null (see query-params.ts). */
function cell(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'object') return jsonColumnText(value);
  return String(value);
}

/** A whole number beyond 64 bits, as json-text.ts writes it into `_properties`. */
const WIDE_INTEGER_TEXT = /^-?\d{20,39}$/;

/**
 * The value a property's column gets from the merged state. The stored part of that state was
 * read back from `_properties`, where a whole number beyond 64 bits is a string: for a BIGNUMERIC
 * column it is that number again, so the column keeps it when a later update does not resend it.
 */
function storedValue(pc: PropertyColumn, value: JsonValue | undefined): JsonValue | undefined {
  return pc.type === 'hugeint' && typeof value === 'string' && WIDE_INTEGER_TEXT.test(value) ? BigInt(value) : value;
}

/** One `@rows` element: the key's merged state, one cell per layout column. */
export function mergeRow(kind: UpsertKind, layout: MergeLayout, change: MergedChange, state: Properties): Array<string | null> {
  const reserved = reservedValuesOfChange(kind, change);
  const fixed = layout.columns.length - layout.properties.size;
  const cells: Array<string | null> = [];
  for (const { name } of layout.columns.slice(0, fixed)) {
    cells.push(cell(name === PROPERTIES_COLUMN ? state : name === CONTEXT_COLUMN ? contextValue(change.context) : reserved[name as ReservedColumn]));
  }
  for (const [name, pc] of layout.properties) cells.push(cell(columnValue(pc.type, storedValue(pc, ownValue(state, name)), jsonColumnText)));
  return cells;
}
