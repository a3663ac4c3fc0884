import { stringifyExactJson } from '../../src/core/records/exact-json';
import type { JsonValue, Properties } from '../../src/core/records/types';

/**
 * The column types every connector maps property values to.
 *
 * | value                                               | type      |
 * |-----------------------------------------------------|-----------|
 * | whole number within 64 bits (±9 223 372 036 854 775 807) | `integer` |
 * | whole number beyond 64 bits, within 128 bits (±1.7e38)   | `hugeint` |
 * | any other number (fractions, `1e21`)                | `float`   |
 * | `true` / `false`                                    | `boolean` |
 * | string                                              | `string`  |
 * | object or array (any depth)                         | `json`    |
 * | `null`, or a whole number beyond 128 bits            | none: `null` says nothing about the type, and no column holds such a number exactly (it stays in `_properties`) |
 *
 * A whole number beyond ±(2^53−1) arrives as a `bigint` with its digits (src/core/records/exact-json.ts).
 */
export type ColumnType = 'integer' | 'hugeint' | 'float' | 'boolean' | 'string' | 'json';

export const COLUMN_TYPES: readonly ColumnType[] = ['integer', 'hugeint', 'float', 'boolean', 'string', 'json'];

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const INT128_MIN = -(2n ** 127n);
const INT128_MAX = 2n ** 127n - 1n;

function bigIntType(value: bigint): ColumnType | undefined {
  if (value >= INT64_MIN && value <= INT64_MAX) return 'integer';
  return value >= INT128_MIN && value <= INT128_MAX ? 'hugeint' : undefined;
}

/** The column type of one property value, or `undefined` for `null` and a whole number beyond 128 bits. */
export function inferType(value: JsonValue): ColumnType | undefined {
  switch (typeof value) {
    case 'number':
      return Number.isSafeInteger(value) ? 'integer' : 'float';
    case 'bigint':
      return bigIntType(value);
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
 * Two widenings exist: `integer` + `float` → `float`, because every safe integer is exactly
 * representable as a double (an integer beyond 2^53 is not: see `fitsValue`), and `integer` +
 * `hugeint` → `hugeint`. A `hugeint` and a `float` conflict: neither holds the other exactly.
 * Every other pair of different types conflicts; connectors keep the value that does not fit
 * somewhere else (in `_properties`) rather than coerce it, since a coercion such as number → string
 * would change the column's meaning for the rows already written.
 */
export function widen(a: ColumnType, b: ColumnType): ColumnType | undefined {
  if (a === b) return a;
  const other = a === 'integer' ? b : b === 'integer' ? a : undefined;
  return other === 'float' || other === 'hugeint' ? other : undefined;
}

/** Whether a value of type `value` can be written to a column of type `column` as it is. */
export function fits(column: ColumnType, value: ColumnType): boolean {
  return widen(column, value) === column;
}

/**
 * Whether this value can be written to a column of type `column` without changing it: like `fits`,
 * except that a whole number beyond 2^53 never goes into a `float` column, where it would be rounded.
 */
export function fitsValue(column: ColumnType, value: JsonValue): boolean {
  const type = inferType(value);
  if (type === undefined || (column === 'float' && typeof value === 'bigint')) return false;
  return fits(column, type);
}

/**
 * A property's value as a column of type `column` takes it: numbers, booleans and strings as they
 * are, a whole number beyond 2^53 (a bigint) as its decimal string, objects and arrays as JSON
 * text (`jsonText`; by default with every digit). `undefined` when the column is of a type
 * Tributary does not write, the value is absent or `null`, or it does not fit (`fitsValue`: a
 * string in an integer column, a fraction in an integer column, an object in a string column…);
 * such a value is not lost, it stays in `_properties`.
 */
export function columnValue(column: ColumnType | undefined, value: JsonValue | undefined, jsonText: (value: JsonValue) => string = stringifyExactJson): number | boolean | string | undefined {
  if (column === undefined || value === undefined || value === null || !fitsValue(column, value)) return undefined;
  if (column === 'json') return jsonText(value);
  return typeof value === 'bigint' ? value.toString() : (value as number | boolean | string);
}

/** A property's own value, never one inherited from `Object.prototype` (`constructor`, `toString`…). */
export function ownValue(props: Properties, name: string): JsonValue | undefined {
  return Object.hasOwn(props, name) ? props[name] : undefined;
}
