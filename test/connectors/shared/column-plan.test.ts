import { cellText, planColumns, touchedColumns } from '../../../connectors/shared/column-plan';
import { LOCAL_COLUMN_RULES } from '../../../connectors/local/tables';
import type { JsonValue, Properties } from '../../../src/core/records/types';

const p = (o: Record<string, JsonValue>): Properties => Object.assign(Object.create(null) as Properties, o);
const base = [
  { name: '_id', sqlType: 'VARCHAR' },
  { name: '_properties', sqlType: 'JSON' },
];

describe('planColumns', () => {
  it('adds new properties typed by their first non-null value', () => {
    const plan = planColumns(LOCAL_COLUMN_RULES, base, [p({ a: null, b: 'x' }), p({ a: 1, b: 2 })], 100);
    expect(plan.add).toEqual([
      { name: 'b', type: 'string' },
      { name: 'a', type: 'integer' },
    ]);
    expect(plan.widen).toEqual([]);
  });

  it('widens an existing integer column on a fraction, and adds a new one directly as float', () => {
    const plan = planColumns(LOCAL_COLUMN_RULES, [...base, { name: 'n', sqlType: 'BIGINT' }], [p({ n: 1.5, m: 1 }), p({ m: 2.5 })], 100);
    expect(plan.widen).toEqual([{ name: 'n', type: 'float' }]);
    expect(plan.add).toEqual([{ name: 'm', type: 'float' }]);
    expect(plan.columns.get('n')).toBe('float');
  });

  it('changes nothing on a conflict and writes NULL for the value', () => {
    const plan = planColumns(LOCAL_COLUMN_RULES, [...base, { name: 'n', sqlType: 'BIGINT' }], [p({ n: 'x' })], 100);
    expect(plan.add).toEqual([]);
    expect(plan.widen).toEqual([]);
    expect(cellText(plan.columns.get('n')!, 'x')).toBeNull();
  });

  it('leaves columns of types it does not write alone', () => {
    const plan = planColumns(LOCAL_COLUMN_RULES, [...base, { name: 'when', sqlType: 'DATE' }], [p({ when: '2026-01-01' })], 100);
    expect(plan.add).toEqual([]);
    expect(plan.columns.has('when')).toBe(false);
  });

  it('skips case collisions, system names, unusable names and names beyond the limit', () => {
    const plan = planColumns(LOCAL_COLUMN_RULES, [...base, { name: 'Plan', sqlType: 'VARCHAR' }], [p({ plan: 'x', _ID: 'y', '': 1, 'a\u0000': 1, ok: 1, more: 1 })], 2);
    expect(plan.add).toEqual([{ name: 'ok', type: 'integer' }]);
    expect([...plan.columns.keys()]).toEqual(['Plan', 'ok']);
  });

  it('stages only the columns some row gives a value to', () => {
    const plan = planColumns(LOCAL_COLUMN_RULES, [...base, { name: 'old', sqlType: 'VARCHAR' }], [p({ a: 1, b: null })], 100);
    expect(touchedColumns(plan, [p({ a: 1, b: null, old: null })])).toEqual(['a']);
  });
});

describe('cellText', () => {
  it.each([
    ['integer', 42, '42'],
    ['float', 42, '42'],
    ['float', 0.1, '0.1'],
    ['float', 1e21, '1e+21'],
    ['boolean', false, 'false'],
    ['string', '', ''],
    ['json', { a: [1, null] }, '{"a":[1,null]}'],
    ['integer', 0.5, null],
    ['string', 1, null],
    ['json', 'x', null],
    ['string', null, null],
    ['string', undefined, null],
  ] as const)('%s column, %p → %p', (column, value, expected) => {
    expect(cellText(column, value as JsonValue | undefined)).toBe(expected);
  });
});
