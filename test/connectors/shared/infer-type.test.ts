import { COLUMN_TYPES, columnValue, fits, fitsValue, inferType, ownValue, widen } from '../../../connectors/shared/infer-type';
import type { Properties } from '../../../src/core/records/types';

describe('inferType', () => {
  it.each([
    [0, 'integer'],
    [-42, 'integer'],
    [Number.MAX_SAFE_INTEGER, 'integer'],
    [Number.MAX_SAFE_INTEGER + 1, 'float'],
    [603851970716743426n, 'integer'],
    [-9223372036854775808n, 'integer'],
    [9223372036854775808n, 'hugeint'],
    [-12345678901234567890n, 'hugeint'],
    [2n ** 127n - 1n, 'hugeint'],
    [1.5, 'float'],
    [1e21, 'float'],
    [true, 'boolean'],
    ['', 'string'],
    ['12', 'string'],
    [{ a: 1 }, 'json'],
    [[1, 2], 'json'],
    [[], 'json'],
  ] as const)('%p → %s', (value, type) => {
    expect(inferType(value as never)).toBe(type);
  });

  it('gives no type to null, nor to a whole number no column holds exactly', () => {
    expect(inferType(null)).toBeUndefined();
    expect(inferType(2n ** 127n)).toBeUndefined();
  });
});

describe('widen', () => {
  it('widens integer and float to float, either way round', () => {
    expect(widen('integer', 'float')).toBe('float');
    expect(widen('float', 'integer')).toBe('float');
  });

  it('keeps equal types and finds no common type for any other pair', () => {
    for (const a of COLUMN_TYPES) {
      for (const b of COLUMN_TYPES) {
        const pair = new Set([a, b]);
        const expected = a === b ? a : pair.has('integer') && pair.has('float') ? 'float' : pair.has('integer') && pair.has('hugeint') ? 'hugeint' : undefined;
        expect(widen(a, b)).toBe(expected);
      }
    }
  });

  it('lets an integer into a float column but not the reverse', () => {
    expect(fits('float', 'integer')).toBe(true);
    expect(fits('integer', 'float')).toBe(false);
    expect(fits('string', 'integer')).toBe(false);
  });

  it('never lets a whole number beyond 2^53 into a float column, where it would be rounded', () => {
    expect(fitsValue('float', 603851970716743426n)).toBe(false);
    expect(fitsValue('float', 42)).toBe(true);
    expect(fitsValue('integer', 603851970716743426n)).toBe(true);
    expect(fitsValue('hugeint', 603851970716743426n)).toBe(true);
    expect(fitsValue('integer', 12345678901234567890n)).toBe(false);
    expect(fitsValue('hugeint', 1.5)).toBe(false);
  });
});

describe('columnValue', () => {
  it('gives values that fit the column, objects as JSON text, and undefined for the others (they stay in _properties)', () => {
    expect(columnValue('integer', 3)).toBe(3);
    expect(columnValue('integer', 3.5)).toBeUndefined();
    expect(columnValue('integer', '3')).toBeUndefined();
    expect(columnValue('float', 3)).toBe(3);
    expect(columnValue('string', { a: 1 })).toBeUndefined();
    expect(columnValue('json', { a: 1 })).toBe('{"a":1}');
    expect(columnValue('json', 'text')).toBeUndefined();
    expect(columnValue('boolean', null)).toBeUndefined();
    expect(columnValue('boolean', undefined)).toBeUndefined();
    expect(columnValue(undefined, 'x')).toBeUndefined();
  });

  it('gives a whole number beyond 2^53 as its decimal string, and JSON text with every digit', () => {
    expect(columnValue('integer', 603851970716743426n)).toBe('603851970716743426');
    expect(columnValue('hugeint', -98765432109876543210n)).toBe('-98765432109876543210');
    expect(columnValue('float', 603851970716743426n)).toBeUndefined();
    expect(columnValue('json', { id: 603851970716743426n })).toBe('{"id":603851970716743426}');
    expect(columnValue('json', { id: 1n }, () => 'custom')).toBe('custom');
  });
});

describe('ownValue', () => {
  it('never reads a value inherited from Object.prototype', () => {
    const props = Object.assign(Object.create(null) as Properties, { plan: 'pro' });
    expect(ownValue(props, 'plan')).toBe('pro');
    expect(ownValue({} as Properties, 'constructor')).toBeUndefined();
  });
});
