import { COLUMN_TYPES, columnValue, fits, inferType, ownValue, widen } from '../../../connectors/shared/infer-type';
import type { Properties } from '../../../src/core/records/types';

describe('inferType', () => {
  it.each([
    [0, 'integer'],
    [-42, 'integer'],
    [Number.MAX_SAFE_INTEGER, 'integer'],
    [Number.MAX_SAFE_INTEGER + 1, 'float'],
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

  it('gives no type to null', () => {
    expect(inferType(null)).toBeUndefined();
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
        const numeric = new Set([a, b]).size === 2 && [a, b].every((t) => t === 'integer' || t === 'float');
        expect(widen(a, b)).toBe(a === b ? a : numeric ? 'float' : undefined);
      }
    }
  });

  it('lets an integer into a float column but not the reverse', () => {
    expect(fits('float', 'integer')).toBe(true);
    expect(fits('integer', 'float')).toBe(false);
    expect(fits('string', 'integer')).toBe(false);
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
});

describe('ownValue', () => {
  it('never reads a value inherited from Object.prototype', () => {
    const props = Object.assign(Object.create(null) as Properties, { plan: 'pro' });
    expect(ownValue(props, 'plan')).toBe('pro');
    expect(ownValue({} as Properties, 'constructor')).toBeUndefined();
  });
});
