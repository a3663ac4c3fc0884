import { COLUMN_TYPES, fits, inferType, widen } from '../../../connectors/shared/infer-type';

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
