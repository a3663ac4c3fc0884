import { ApiError } from '../../src/core/errors';
import { utf8Text } from '../../src/ingest/utf8-text';

/**
 * A body's text is what the validating TextDecoder makes of it, byte-order mark dropped, whether
 * it takes that decoder (small or ASCII bodies) or ICU's conversion (large ones with other
 * characters); bytes that are not UTF-8 are refused either way.
 */
const reference = new TextDecoder('utf-8', { fatal: true });
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** `size` bytes or a little more of JSON text made of `unit` repeated. */
const body = (unit: string, size: number) => Buffer.from(`["${unit.repeat(Math.ceil(size / Buffer.byteLength(unit)))}"]`);

const units = ['plain ascii ', 'Tributary — relay ', 'naïve café ', '日本語のテキスト', 'emoji 🚀🎉 ', 'mixed — 🚀 ü 中 '];
const sizes = [0, 90, 4_000, 4_096, 5_000, 30_000, 300_000];

test.each(units.flatMap((unit) => sizes.map((size) => [unit, size] as const)))('%j × %i bytes: the text TextDecoder makes', (unit, size) => {
  const raw = body(unit, size);
  expect(utf8Text(raw)).toBe(reference.decode(raw));
  const withMark = Buffer.concat([BOM, raw]);
  expect(utf8Text(withMark)).toBe(reference.decode(withMark));
  expect(utf8Text(withMark).charCodeAt(0)).toBe(0x5b);
});

const invalid: Array<[string, Buffer]> = [
  ['a lone continuation byte', Buffer.from([0x80])],
  ['an overlong encoding of "/"', Buffer.from([0xc0, 0xaf])],
  ['an encoded surrogate (CESU-8)', Buffer.from([0xed, 0xa0, 0x80])],
  ['a 4-byte sequence cut short', Buffer.from([0xf0, 0x9f, 0x9a])],
  ['a byte that UTF-8 never uses', Buffer.from([0xff])],
];

test.each(invalid.flatMap(([what, bad]) => [4, 10_000].map((size) => [what, size, bad] as const)))('%s in a body of %i bytes: 400 ERR_MALFORMED_BODY', (_what, size, bad) => {
  const good = body('Tributary — relay ', size);
  const raw = Buffer.concat([good.subarray(0, good.length >> 1), bad, good.subarray(good.length >> 1)]);
  expect(() => reference.decode(raw)).toThrow();
  let thrown: unknown;
  try {
    utf8Text(raw);
  } catch (err) {
    thrown = err;
  }
  expect(thrown).toBeInstanceOf(ApiError);
  expect(thrown).toMatchObject({ code: 'ERR_MALFORMED_BODY' });
});
