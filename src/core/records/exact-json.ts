import { parse as parseLossless, stringify as stringifyLossless } from 'lossless-json';

/**
 * JSON that keeps every integer's digits. An integer literal outside ±(2^53−1) becomes a `bigint`
 * (JSON.parse would round 603851970716743426 to 603851970716743400); every other number is a
 * `number`, exactly as JSON.parse makes it. Written back, a `bigint` is a bare JSON number with
 * its digits, so the text in Redis (streams, dead letters) is plain JSON that any reader can take.
 */

const INTEGER_LITERAL = /^-?\d+$/;

const isDigit = (code: number): boolean => code >= 48 && code <= 57;

/**
 * Whether the text holds a run of 16 digits. 2^53 has 16 digits: without such a run the text holds
 * no integer JSON.parse could round. A run inside a string (a card number, an id sent as text) or a
 * fraction only costs the closer look of `hasUnsafeIntegerLiteral`. Any run of 16 covers exactly
 * one position ≡ 15 (mod 16), so only those are read, and the digits around one that is a digit: a
 * sixteenth of the text for most bodies. `/\d{16}/` tries every digit as a start and cost half as
 * much as JSON.parse on arrays of events; this costs about a tenth (bench/RESULTS.md).
 */
export function hasLongDigitRun(text: string): boolean {
  const n = text.length;
  for (let i = 15; i < n; i += 16) {
    if (!isDigit(text.charCodeAt(i))) continue;
    let start = i;
    while (start > 0 && i - start < 15 && isDigit(text.charCodeAt(start - 1))) start--;
    let end = i;
    while (end - start < 15 && end + 1 < n && isDigit(text.charCodeAt(end + 1))) end++;
    if (end - start >= 15) return true;
  }
  return false;
}

/** A JSON number's text as JSON.parse reads it, except that an integer it would round is a bigint. */
function readNumber(text: string): number | bigint {
  const n = Number(text);
  return Number.isSafeInteger(n) || !INTEGER_LITERAL.test(text) ? n : BigInt(text);
}

/** A repeated key keeps its last value, as with JSON.parse (lossless-json would throw). */
const lastWins = ({ newValue }: { newValue: unknown }): unknown => newValue;

const QUOTE = 34;
const BACKSLASH = 92;
/** `.`, `e`, `E`, `+`: next to a digit run they make it part of a fraction or an exponent. */
const NOT_INTEGER = new Set([46, 101, 69, 43]);
const MAX_SAFE_DIGITS = String(Number.MAX_SAFE_INTEGER);

/**
 * Whether the text holds, outside its strings, an integer literal beyond ±(2^53−1): one pass over
 * every character, run only when `hasLongDigitRun` found a run, so that a long digit run inside a
 * string (a hex id, a card number) or in a fraction (`0.30000000000000004`, common from
 * JavaScript clients) does not send a body to the slower parser. Text that is not JSON may answer
 * either way: JSON.parse or the lossless parser then refuses it.
 */
export function hasUnsafeIntegerLiteral(text: string): boolean {
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d === BACKSLASH) i++;
        else if (d === QUOTE) break;
      }
      i++;
    } else if (isDigit(c)) {
      const start = i;
      while (i < n && isDigit(text.charCodeAt(i))) i++;
      const digits = i - start;
      if (digits < 16 || NOT_INTEGER.has(text.charCodeAt(start - 1)) || NOT_INTEGER.has(text.charCodeAt(i))) continue;
      if (digits > 16 || text.slice(start, i) > MAX_SAFE_DIGITS) return true;
    } else i++;
  }
  return false;
}

/**
 * Parses JSON text. Text without an integer literal beyond 2^53 takes JSON.parse (the common case,
 * at its speed, found by `hasLongDigitRun` on a sixteenth of the text); other text takes
 * lossless-json, which keeps `__proto__` as an own key like JSON.parse. Throws a SyntaxError for
 * text that is not JSON.
 */
export function parseExactJson(text: string): unknown {
  if (!hasLongDigitRun(text) || !hasUnsafeIntegerLiteral(text)) return JSON.parse(text);
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
