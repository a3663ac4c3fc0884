import { formatA1, parseA1, quoteSheet } from './a1';

const open = undefined;

test.each([
  ['Sheet1!A1:B2', { sheet: 'Sheet1', startRow: 1, startCol: 1, endRow: 2, endCol: 2 }],
  ["'My tab'!A1", { sheet: 'My tab', startRow: 1, startCol: 1, endRow: 1, endCol: 1, single: true }],
  ["'Jon''s'!C5:C", { sheet: "Jon's", startRow: 5, startCol: 3, endRow: open, endCol: 3 }],
  ["'a!b'!A:Z", { sheet: 'a!b', startRow: open, startCol: 1, endRow: open, endCol: 26 }],
  ['events!1:1', { sheet: 'events', startRow: 1, startCol: open, endRow: 1, endCol: open }],
  ['events!AA10:ZZ20', { sheet: 'events', startRow: 10, startCol: 27, endRow: 20, endCol: 702 }],
  ['A2:C', { sheet: open, startRow: 2, startCol: 1, endRow: open, endCol: 3 }],
  ['events', { sheet: 'events', startRow: open, startCol: open, endRow: open, endCol: open }],
  ["'events'", { sheet: 'events', startRow: open, startCol: open, endRow: open, endCol: open }],
])('parses %s', (text, expected) => {
  expect(parseA1(text)).toEqual(expected);
});

test.each(["'unterminated!A1", "'x'A1", 'Sheet1!A1:B2:C3', 'Sheet1!1:A', 'Sheet1!A0', ''])('refuses %s', (text) => {
  expect(() => parseA1(text)).toThrow(/Unable to parse range/);
});

test('formats ranges the way Google answers them, quoting only names that need it', () => {
  expect(formatA1('events', 2, 1, 10, 6)).toBe('events!A2:F10');
  expect(formatA1("Jon's tab", 7, 1, 7, 1)).toBe("'Jon''s tab'!A7");
  expect(quoteSheet('A1')).toBe("'A1'");
  expect(quoteSheet('events_2026_11')).toBe('events_2026_11');
});
