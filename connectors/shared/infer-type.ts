import type { JsonValue, Properties } from '../../src/core/records/types';

/**
 * The column types every connector maps property values to.
 *
 * | value                                   | type      |
 * |-----------------------------------------|-----------|
 * | number with `Number.isSafeInteger`      | `integer` |
 * | any other number (fractions, ≥ 2^53)    | `float`   |
 * | `true` / `false`                        | `boolean` |
 * | string                                  | `string`  |
 * | object or array (any depth)             | `json`    |
 * | `null`                                  | none: it says nothing about the type |
 */
export type ColumnType = 'integer' | 'float' | 'boolean' | 'string' | 'json';

export const COLUMN_TYPES: readonly ColumnType[] = ['integer', 'float', 'boolean', 'string', 'json'];

/** The column type of one property value, or `undefined` for `null`. */
export function inferType(value: JsonValue): ColumnType | undefined {
  switch (typeof value) {
    case 'number':
      return Number.isSafeInteger(value) ? 'integer' : 'float';
    case 'boolean':
      return 'boolean';
    case 'string':
      return 'string';
    default:
      return value === null ? undefined : 'json';
  }
}

/**
 * The type a column must have to hold values of both `a` and `b`, or `undefined` when there is
 * none (a conflict).
 *
 * Only one widening exists: `integer` + `float` → `float`, because every safe integer is exactly
 * representable as a double. Every other pair of different types conflicts; connectors keep the
 * value that does not fit somewhere else (the local warehouse: in `_properties`) rather than
 * coerce it, since a coercion such as number → string would change the column's meaning for the
 * rows already written.
 */
export function widen(a: ColumnType, b: ColumnType): ColumnType | undefined {
  if (a === b) return a;
  if ((a === 'integer' && b === 'float') || (a === 'float' && b === 'integer')) return 'float';
  return undefined;
}

/** Whether a value of type `value` can be written to a column of type `column` as it is. */
export function fits(column: ColumnType, value: ColumnType): boolean {
  return widen(column, value) === column;
}

/**
 * A property's value as a column of type `column` takes it: numbers, booleans and strings as they
 * are, objects and arrays as JSON text. `undefined` when the column is of a type Tributary does not
 * write, the value is absent or `null`, or it does not fit (a string in an integer column, a
 * fraction in an integer column, an object in a string column…); such a value is not lost, it stays
 * in `_properties`.
 */
export function columnValue(column: ColumnType | undefined, value: JsonValue | undefined): number | boolean | string | undefined {
  if (column === undefined || value === undefined || value === null) return undefined;
  const type = inferType(value);
  if (type === undefined || !fits(column, type)) return undefined;
  return type === 'json' ? JSON.stringify(value) : (value as number | boolean | string);
}

/** A property's own value, never one inherited from `Object.prototype` (`constructor`, `toString`…). */
export function ownValue(props: Properties, name: string): JsonValue | undefined {
  return Object.hasOwn(props, name) ? props[name] : undefined;
}
