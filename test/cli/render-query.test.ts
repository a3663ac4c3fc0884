import { cellText, MAX_CELL, renderResultTable, toJson } from '../../src/cli/render-query';

test('cells: NULL, 64-bit integers, dates, nested JSON, bytes, control characters', () => {
  expect(cellText(null)).toBe('NULL');
  expect(cellText(undefined)).toBe('NULL');
  expect(cellText(12345678901234567890n)).toBe('12345678901234567890');
  expect(cellText(new Date('2024-05-01T10:00:00.000Z'))).toBe('2024-05-01T10:00:00.000Z');
  expect(cellText({ a: [1, { b: null }], big: 9007199254740993n })).toBe('{"a":[1,{"b":null}],"big":"9007199254740993"}');
  expect(cellText(new Uint8Array([0xde, 0xad]))).toBe('\\xdead');
  expect(cellText('two\nlines\tand\u0007bell')).toBe('two\\nlines\\tand\\u0007bell');
  expect(cellText(false)).toBe('false');
  expect(cellText('')).toBe('');
});

test('long cells are cut with an ellipsis, by characters', () => {
  const cut = cellText('é'.repeat(MAX_CELL + 10));
  expect([...cut]).toHaveLength(MAX_CELL);
  expect(cut.endsWith('…')).toBe(true);
});

test('columns align, numbers to the right, with a row count', () => {
  const text = renderResultTable({
    columns: ['_event', 'n', 'props'],
    rows: [
      ['purchase', '12', { total: 9.5 }],
      ['signup', 3, null],
      ['café', 1000n, 'x'],
    ],
  });
  expect(text.split('\n')).toEqual([
    '_event   |    n | props',
    '---------+------+--------------',
    'purchase |   12 | {"total":9.5}',
    'signup   |    3 | NULL',
    'café     | 1000 | x',
    '(3 rows)',
  ]);
});

test('an empty result keeps its header', () => {
  expect(renderResultTable({ columns: ['a'], rows: [] })).toBe('a\n-\n(0 rows)');
  expect(renderResultTable({ columns: ['n'], rows: [[1]] }).split('\n').at(-1)).toBe('(1 row)');
});

test('JSON keeps big integers exact', () => {
  expect(toJson({ rows: [[2n ** 64n]] })).toBe('{"rows":[["18446744073709551616"]]}');
});
