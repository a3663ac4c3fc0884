import { stringifyExactJson } from '../../src/core/records/exact-json';

const INT64_MIN = -(2n ** 63n);
const UINT64_MAX = 2n ** 64n - 1n;

/**
 * BigQuery's JSON type stores a number as INT64, UINT64 or FLOAT64, and by default refuses one it
 * cannot store without losing precision (https://cloud.google.com/bigquery/docs/json-data,
 * `wide_number_mode`). A whole number beyond those is written as a JSON string with its digits.
 */
const widerAsString = (_key: string, value: unknown): unknown => (typeof value === 'bigint' && (value < INT64_MIN || value > UINT64_MAX) ? value.toString() : value);

/**
 * The JSON text of a value for a JSON column (`_properties`, `_context`, a property's JSON column):
 * JSON.stringify, except that a bigint within 64 bits is a bare number with its digits and one
 * beyond is a string.
 */
export function jsonColumnText(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (err) {
    if (!(err instanceof TypeError)) throw err;
    return stringifyExactJson(value, widerAsString);
  }
}
