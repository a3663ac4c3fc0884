import { decodeBase64Json } from '../../src/ingest/base64-json';
import { ApiError } from '../../src/core/errors';

const value = { _event: 'view', note: '?>~ü€ÿé?>~ü€ÿ1', n: [1, null, true] };
const std = Buffer.from(JSON.stringify(value)).toString('base64');

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).field).toBe('data');
    return (err as ApiError).code;
  }
  return undefined;
}

test('the sample uses both alphabet-specific characters and padding', () => {
  expect(std).toMatch(/\+/);
  expect(std).toMatch(/\//);
  expect(std).toMatch(/=$/);
});

test.each([
  ['standard, padded', std],
  ['standard, unpadded', std.replace(/=+$/, '')],
  ['URL-safe, padded', std.replace(/\+/g, '-').replace(/\//g, '_')],
  ['URL-safe, unpadded', std.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')],
  ['with + read back from a space', std.replace(/\+/g, ' ')],
  ['with surrounding whitespace', `  ${std}\n`],
])('%s decodes', (_label, input) => {
  expect(decodeBase64Json(input)).toEqual(value);
});

test('two-byte padding and no padding at all', () => {
  const two = Buffer.from('{"a":1}').toString('base64');
  expect(two).toMatch(/==$/);
  expect(decodeBase64Json(two)).toEqual({ a: 1 });
  expect(decodeBase64Json(two.replace(/=+$/, ''))).toEqual({ a: 1 });
});

test('__proto__ in the decoded JSON stays an own key', () => {
  const decoded = decodeBase64Json(Buffer.from('{"__proto__":{"polluted":1}}').toString('base64url')) as Record<string, unknown>;
  expect(Object.getOwnPropertyNames(decoded)).toEqual(['__proto__']);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
});

test.each([
  ['characters outside both alphabets', 'eyJhIjox!'],
  ['a length that no base64 can have', 'abcde'],
  ['padding in the middle', 'ey=J'],
  ['three padding characters', 'eyJ==='],
  ['bytes that are not UTF-8', Buffer.from([0xff, 0xfe, 0x80]).toString('base64')],
])('%s: ERR_MALFORMED_BASE64', (_label, input) => {
  expect(codeOf(() => decodeBase64Json(input))).toBe('ERR_MALFORMED_BASE64');
});

test.each([
  ['text', Buffer.from('hello').toString('base64')],
  ['truncated JSON', Buffer.from('{"a":').toString('base64')],
  ['nothing at all', ''],
])('base64 of %s: ERR_MALFORMED_JSON', (_label, input) => {
  expect(codeOf(() => decodeBase64Json(input))).toBe('ERR_MALFORMED_JSON');
});
