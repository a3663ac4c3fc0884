import { parseExactJson, stringifyExactJson } from '../../../src/core/records/exact-json';

/**
 * Conversions of JSON values into column values, as tabledata.insertAll and query parameters
 * accept them: numbers or their decimal text for INTEGER and FLOAT, `true`/`false` (or their text)
 * for BOOLEAN, RFC 3339 / `YYYY-MM-DD HH:MM[:SS[.ffffff]]` text or epoch seconds for TIMESTAMP,
 * JSON text (or an inline JSON value) for JSON, whole numbers or their decimal text for BIGNUMERIC.
 * The request body is read exactly, so an integer beyond 2^53 arrives here as a bigint, as Google
 * sees it. A conversion that fails throws a `ValueError` with the message BigQuery gives.
 */
export class ValueError extends Error {}

/** One stored cell: what the DuckDB appender takes for the column's type. */
export type Cell = string | bigint | number | boolean | null;

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const TIMESTAMP = /^(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?)?\s*(Z|UTC|[+-]\d{2}(?::?\d{2})?)?$/i;

function toInteger(value: unknown): bigint {
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
  if (typeof value === 'bigint' && value >= INT64_MIN && value <= INT64_MAX) return value;
  if (typeof value === 'string' && /^[+-]?\d+$/.test(value.trim())) {
    const n = BigInt(value.trim());
    if (n >= INT64_MIN && n <= INT64_MAX) return n;
  }
  throw new ValueError(`Cannot convert value to integer (bad value): ${render(value)}`);
}

/** DuckDB's widest DECIMAL has 38 digits; BIGNUMERIC goes to ~5.8e38 with 38 fraction digits. This fake keeps whole numbers of up to 38 digits, as decimal text. */
const BIGNUMERIC_DIGITS = /^[+-]?\d{1,38}$/;

function toBigNumeric(value: unknown): string {
  const text = typeof value === 'bigint' || (typeof value === 'number' && Number.isSafeInteger(value)) ? String(value) : typeof value === 'string' ? value.trim() : undefined;
  if (text !== undefined && BIGNUMERIC_DIGITS.test(text)) return BigInt(text).toString();
  if (text !== undefined && /^[+-]?\d*\.\d+$/.test(text)) throw new ValueError(`This fake stores whole BIGNUMERIC values only: ${render(value)}`);
  throw new ValueError(`Invalid BIGNUMERIC value: ${render(value)}`);
}

function toFloat(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') {
    const t = value.trim();
    if (/^[+-]?(inf|infinity)$/i.test(t)) return t.startsWith('-') ? -Infinity : Infinity;
    if (/^nan$/i.test(t)) return NaN;
    const n = Number(t);
    if (t !== '' && !Number.isNaN(n)) return n;
  }
  throw new ValueError(`Cannot convert value to floating point (bad value): ${render(value)}`);
}

function toBoolean(value: unknown): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value.trim())) return value.trim().toLowerCase() === 'true';
  throw new ValueError(`Cannot convert value to boolean (bad value): ${render(value)}`);
}

/** A timestamp as ISO 8601 UTC text with microseconds, which DuckDB's TIMESTAMPTZ parses exactly. */
function toTimestamp(value: unknown): string {
  if (typeof value === 'number' && Number.isFinite(value)) return microsToIso(BigInt(Math.round(value * 1e6)));
  const m = typeof value === 'string' ? TIMESTAMP.exec(value.trim()) : null;
  if (m) {
    const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone = 'Z'] = m;
    const offset = /^(z|utc)$/i.test(zone) ? 0 : (zone.startsWith('-') ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(-2)));
    const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
    const date = new Date(ms);
    if (!Number.isNaN(ms) && date.getUTCDate() === Number(d) && date.getUTCMonth() === Number(mo) - 1 && Number(h) < 24) {
      const micros = BigInt(ms - offset * 60_000) * 1000n + BigInt((frac.slice(1) + '000000').slice(0, 6));
      return microsToIso(micros);
    }
  }
  throw new ValueError(`Couldn't convert value to timestamp: Could not parse '${render(value)}' as a timestamp. Required format is YYYY-MM-DD HH:MM[:SS[.SSSSSS]] or YYYY/MM/DD HH:MM[:SS[.SSSSSS]]`);
}

export function microsToIso(micros: bigint): string {
  const ms = Number(micros / 1000n) - (micros % 1000n < 0n ? 1 : 0);
  const sub = ((micros % 1000n) + 1000n) % 1000n;
  return `${new Date(ms).toISOString().slice(0, -1)}${sub.toString().padStart(3, '0')}Z`;
}

const UINT64_MAX = 2n ** 64n - 1n;

/** A whole number the JSON type cannot store as INT64 or UINT64, at any depth. */
function wideNumber(value: unknown): bigint | undefined {
  if (typeof value === 'bigint') return value < INT64_MIN || value > UINT64_MAX ? value : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  for (const item of Object.values(value)) {
    const wide = wideNumber(item);
    if (wide !== undefined) return wide;
  }
  return undefined;
}

/**
 * JSON stores numbers as INT64, UINT64 or FLOAT64 and refuses, by default, one it cannot store
 * without losing precision (https://cloud.google.com/bigquery/docs/json-data, wide_number_mode).
 * Only whole numbers are checked here.
 */
function toJson(value: unknown): string {
  let parsed: unknown = value;
  if (typeof value === 'string') {
    try {
      parsed = parseExactJson(value);
    } catch (err) {
      throw new ValueError(`Invalid JSON: ${(err as Error).message}`);
    }
  }
  const wide = wideNumber(parsed);
  if (wide !== undefined) throw new ValueError(`Invalid JSON: the number ${wide} cannot be stored in JSON without loss of precision`);
  return typeof value === 'string' ? value : stringifyExactJson(value);
}

function toText(value: unknown): string {
  if (typeof value === 'string') return value;
  throw new ValueError(`Cannot convert value to string: ${render(value)}`);
}

const render = (value: unknown): string => (typeof value === 'string' ? value : stringifyExactJson(value) ?? String(value)).slice(0, 100);

/** Converts one JSON value to the cell of a column of `type` (a canonical type name). */
export function toCell(type: string, value: unknown): Cell {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'STRING':
      return toText(value);
    case 'INTEGER':
      return toInteger(value);
    case 'FLOAT':
      return toFloat(value);
    case 'BOOLEAN':
      return toBoolean(value);
    case 'TIMESTAMP':
      return toTimestamp(value);
    case 'JSON':
      return toJson(value);
    case 'BIGNUMERIC':
      return toBigNumeric(value);
    default:
      throw new ValueError(`Unsupported type ${type}`);
  }
}
