import { bigIntsAsStrings, hasLongDigitRun, hasUnsafeIntegerLiteral, holdsBigInt, parseExactJson, stringifyExactJson } from '../../src/core/records/exact-json';
import { seededRandom } from '../helpers/seeded-random';

describe('parseExactJson', () => {
  it('keeps the digits of integers beyond 2^53, positive and negative, nested and in arrays', () => {
    const text = '{"id":603851970716743426,"neg":-603851970716743426,"big":12345678901234567890,"a":[1,18446744073709551615],"n":{"x":-98765432109876543210}}';
    expect(parseExactJson(text)).toEqual({ id: 603851970716743426n, neg: -603851970716743426n, big: 12345678901234567890n, a: [1, 18446744073709551615n], n: { x: -98765432109876543210n } });
  });

  it('gives every other number as JSON.parse does', () => {
    const text = '{"safe":9007199254740991,"f":1.2345678901234567891,"e":1e21,"z":-0,"s":"12345678901234567890","x":1234567890123456.5}';
    expect(parseExactJson(text)).toEqual(JSON.parse(text));
  });

  it('keeps JSON.parse behaviour for repeated keys and __proto__', () => {
    const value = parseExactJson('{"a":1,"a":12345678901234567890,"__proto__":{"p":1}}') as Record<string, unknown>;
    expect(value.a).toBe(12345678901234567890n);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value)).toEqual(['a', '__proto__']);
  });

  it('refuses text that is not JSON, on both paths', () => {
    expect(() => parseExactJson('{"a":12345678901234567890,}')).toThrow(SyntaxError);
    expect(() => parseExactJson('{"a":1,}')).toThrow(SyntaxError);
  });
});

describe('stringifyExactJson', () => {
  it('writes bigints as bare numbers with their digits, and reads back the same', () => {
    const value = { id: 603851970716743426n, list: [-12345678901234567890n, 1.5, 'x'] };
    const text = stringifyExactJson(value);
    expect(text).toBe('{"id":603851970716743426,"list":[-12345678901234567890,1.5,"x"]}');
    expect(parseExactJson(text)).toEqual(value);
  });

  it('is JSON.stringify for values without a bigint', () => {
    const value = { a: 1, b: [null, 'x'], c: undefined };
    expect(stringifyExactJson(value, undefined, 2)).toBe(JSON.stringify(value, undefined, 2));
  });
});

describe('holdsBigInt and bigIntsAsStrings', () => {
  it('find bigints at any depth and turn them into their decimal strings', () => {
    const value = { a: { b: [1, 12345678901234567890n] } };
    expect(holdsBigInt(value)).toBe(true);
    expect(holdsBigInt({ a: { b: [1, '12345678901234567890'] } })).toBe(false);
    expect(bigIntsAsStrings(value)).toEqual({ a: { b: [1, '12345678901234567890'] } });
  });
});

describe('hasLongDigitRun', () => {
  it('finds a run of 16 digits wherever it is, as /\\d{16}/ does', () => {
    const rnd = seededRandom(7);
    // One expect for all (20 000 of them took 4 s): the texts where the two disagree, none.
    const disagreeing: string[] = [];
    for (let t = 0; t < 20_000; t++) {
      let text = '';
      for (let j = Math.floor(rnd() * 70); j > 0; j--) text += rnd() < 0.9 ? String(Math.floor(rnd() * 10)) : 'x';
      if (hasLongDigitRun(text) !== /\d{16}/.test(text)) disagreeing.push(text);
    }
    expect(disagreeing).toEqual([]);
    expect(hasLongDigitRun('9007199254740991')).toBe(true);
    expect(hasLongDigitRun('900719925474099')).toBe(false);
    expect(hasLongDigitRun('{"a":123456789012345,"b":"x1234567890123456"}')).toBe(true);
  });
});

describe('hasUnsafeIntegerLiteral', () => {
  it.each([
    ['{"id":9007199254740992}', true],
    ['[-603851970716743426]', true],
    ['{"a":"x","b":12345678901234567890}', true],
    ['{"id":9007199254740991}', false],
    ['{"sid":"sess-1491351090760846"}', false],
    ['{"s":"a\\"12345678901234567890"}', false],
    ['{"s":"a\\\\","n":12345678901234567890}', true],
    ['{"r":0.30000000000000004,"x":1.2345678901234567891}', false],
    ['{"e":12345678901234567890e3,"f":12345678901234567890.5}', false],
  ])('%s → %p', (text, expected) => {
    expect(hasUnsafeIntegerLiteral(text)).toBe(expected);
    expect(typeof parseExactJson(text)).toBe(typeof JSON.parse(text));
  });

  it('sends a body whose long digit runs are all in strings or fractions to JSON.parse', () => {
    const text = '{"sid":"sess-1491351090760846","r":0.30000000000000004}';
    expect(hasLongDigitRun(text)).toBe(true);
    expect(parseExactJson(text)).toEqual(JSON.parse(text));
  });
});
