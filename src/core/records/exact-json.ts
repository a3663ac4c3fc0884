import { parse as parseLossless, stringify as stringifyLossless } from 'lossless-json';

/**
 * JSON that keeps every integer's digits. An integer literal outside ±(2^53−1) becomes a `bigint`
 * (JSON.parse would round 603851970716743426 to 603851970716743400); every other number is a
 * `number`, exactly as JSON.parse makes it. Written back, a `bigint` is a bare JSON number with
 * its digits, so the text in Redis (streams, dead letters) is plain JSON that any reader can take.
 */

/**
 * 2^53 has 16 digits: without a run of 16 digits the text holds no integer JSON.parse could round.
 * A run inside a string (a card number, an id sent as text) only sends the body the slower way.
 */
const LONG_DIGIT_RUN = /\d{16}/;
const INTEGER_LITERAL = /^-?\d+$/;

/** A JSON number's text as JSON.parse reads it, except that an integer it would round is a bigint. */
function readNumber(text: string): number | bigint {
  const n = Number(text);
  return Number.isSafeInteger(n) || !INTEGER_LITERAL.test(text) ? n : BigInt(text);
}

/** A repeated key keeps its last value, as with JSON.parse (lossless-json would throw). */
const lastWins = ({ newValue }: { newValue: unknown }): unknown => newValue;

/**
 * Parses JSON text. Text without a run of 16 digits takes JSON.parse (the common case, at its
 * speed); other text takes lossless-json, which keeps `__proto__` as an own key like JSON.parse.
 * Throws a SyntaxError for text that is not JSON.
 */
export function parseExactJson(text: string): unknown {
  if (!LONG_DIGIT_RUN.test(text)) return JSON.parse(text);
  return parseLossless(text, null, { parseNumber: readNumber, onDuplicateKey: lastWins });
}

/**
 * JSON.stringify that writes a `bigint` as its digits. JSON.stringify throws a TypeError on the
 * first bigint it meets, so values without one pay nothing; the others are written by lossless-json.
 */
export function stringifyExactJson(value: unknown, replacer?: (key: string, value: unknown) => unknown, space?: number): string {
  try {
    return JSON.stringify(value, replacer, space);
  } catch (err) {
    if (!(err instanceof TypeError)) throw err;
    return stringifyLossless(value, replacer, space) as string;
  }
}

/** Whether `value` holds a bigint at any depth. */
export function holdsBigInt(value: unknown): boolean {
  if (typeof value === 'bigint') return true;
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some(holdsBigInt);
  for (const key of Object.keys(value)) if (holdsBigInt((value as Record<string, unknown>)[key])) return true;
  return false;
}

/** A copy of `value` with every bigint written as its decimal string: what a JSON-only reader can take without rounding it. */
export function bigIntsAsStrings(value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(bigIntsAsStrings);
  // Null-prototype, so that a `__proto__` key is copied as data.
  const out = Object.setPrototypeOf({}, null) as Record<string, unknown>;
  for (const key of Object.keys(value)) out[key] = bigIntsAsStrings((value as Record<string, unknown>)[key]);
  return out;
}
