import { withinChars } from '../../jobs/delivery/delivery-loop';
import type { StreamRecord } from '../../jobs/routing/stream-entries';

const record = (n: number, chars: number): StreamRecord => ({ id: `1-0:${n}`, json: 'x'.repeat(chars), endsEntry: n % 3 === 2 });

test('a history batch stops at its characters of JSON, one record at least, wherever its entries end', () => {
  const records = Array.from({ length: 10 }, (_, n) => record(n, 1000));
  expect(withinChars(records, 10_000)).toHaveLength(10);
  expect(withinChars(records, 3500)).toEqual(records.slice(0, 3));
  expect(withinChars(records, 4000)).toEqual(records.slice(0, 4));
  expect(withinChars([record(0, 50_000), record(1, 10)], 1000)).toEqual([record(0, 50_000)]);
  expect(withinChars([], 1000)).toEqual([]);
});
