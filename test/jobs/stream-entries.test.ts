import { compareStreamIds, entryIdOf } from '../../jobs/delivery/keys';
import { COMPACTED_LEVEL, entryFields, entryRecords, rangeStartAfter, recordsAfter, ROUTED_LEVEL } from '../../jobs/routing/stream-entries';

/** Records in a destination's stream: blocks of a job's records, read back exactly, in order. */
const json = (n: number) => JSON.stringify({ kind: 'event', id: `e${n}`, event: 'view', properties: { text: 'ünï\\ncode\u2028', n } });

test('a block holds its records exactly, known as <entry>#<k>, the last one ending the entry', () => {
  const records = [json(1), json(2), json(3)];
  const fields = entryFields(records);
  expect(fields.slice(0, 3)).toEqual(['n', '3', 'b1']);
  const read = entryRecords('1700-5', fields);
  expect(read).toEqual([
    { id: '1700-5#0', json: records[0], endsEntry: false },
    { id: '1700-5#1', json: records[1], endsEntry: false },
    { id: '1700-5#2', json: records[2], endsEntry: true },
  ]);
});

test("the router's fast blocks and the compactor's dense ones read back alike", () => {
  const words = ['pricing', 'docs', 'blog', 'signup', 'checkout', 'team', 'careers', 'api'];
  const records = Array.from({ length: 100 }, (_, n) =>
    JSON.stringify({ kind: 'event', id: `0190a000-${(n * 7919).toString(16)}`, event: words[n % 8], properties: { page: `/${words[(n * 5) % 8]}/${(n * 7919) % 1000}`, ms: (n * 104729) % 100000, title: `${words[(n * 3) % 8]} ${words[(n * 7) % 8]}` } }),
  );
  const routed = entryFields(records);
  const compacted = entryFields(records, undefined, COMPACTED_LEVEL);
  expect(entryRecords('1700-5', compacted)).toEqual(entryRecords('1700-5', routed));
  expect(entryRecords('1700-5', routed).map((r) => r.json)).toEqual(records);
  // Not the same deflate: the compactor's level packs tighter than the router's.
  expect(ROUTED_LEVEL).toBeLessThan(COMPACTED_LEVEL);
  expect((compacted[3] as Buffer).length).toBeLessThan((routed[3] as Buffer).length);
});

test('a plain record, as replay and older streams write it, keeps its entry id', () => {
  expect(entryRecords('1700-6', ['r', json(4)])).toEqual([{ id: '1700-6', json: json(4), endsEntry: true }]);
  expect(() => entryRecords('1700-7', ['x', 'y'])).toThrow('holds no record');
});

test('record ids order by entry, then place in the block', () => {
  const ids = ['1700-5#2', '1700-6', '1700-5#0', '1699-9', '1700-5#10', '1700-5#1'];
  expect([...ids].sort(compareStreamIds)).toEqual(['1699-9', '1700-5#0', '1700-5#1', '1700-5#2', '1700-5#10', '1700-6']);
  expect(entryIdOf('1700-5#2')).toBe('1700-5');
  expect(entryIdOf('1700-6')).toBe('1700-6');
});

test('reading after a cursor inside a block starts at that block and skips what was delivered', () => {
  expect(rangeStartAfter('1700-5#1')).toBe('1700-5');
  expect(rangeStartAfter('1700-5')).toBe('(1700-5');
  const entries: Array<[string, Array<string | Buffer>]> = [
    ['1700-5', entryFields([json(1), json(2), json(3)])],
    ['1700-6', ['r', json(4)]],
  ];
  expect(recordsAfter(entries, '1700-5#1').map((r) => r.id)).toEqual(['1700-5#2', '1700-6']);
  expect(recordsAfter(entries, '0-0')).toHaveLength(4);
});

test('reading stops decoding at its limit: a batch from a backlog of large blocks decodes only what it takes', () => {
  const entries: Array<[string, Array<string | Buffer>]> = [
    ['1700-5', entryFields([json(1), json(2), json(3)])],
    ['1700-6', entryFields([json(4), json(5)])],
    // Were this entry decoded, reading would throw.
    ['1700-7', ['x', 'y']],
  ];
  expect(recordsAfter(entries, '1700-5#0', 3).map((r) => r.id)).toEqual(['1700-5#1', '1700-5#2', '1700-6#0']);
  expect(recordsAfter(entries, '0-0', 5)).toHaveLength(5);
  expect(() => recordsAfter(entries, '0-0', 6)).toThrow('holds no record');
});

test('a block is a fraction of its JSON: 20 similar events in about a fifth of their size', () => {
  const records = Array.from({ length: 20 }, (_, n) => JSON.stringify({ kind: 'event', id: `019aa6f0-1234-7000-8000-${String(n).padStart(12, '0')}`, receivedAt: '2026-11-25T10:00:00.000Z', event: 'page_view', uid: `user-${n % 3}`, properties: { page: '/pricing', referrer: 'https://www.google.com/', n } }));
  const bytes = (entryFields(records)[3] as Buffer).length;
  expect(bytes).toBeLessThan(records.join('').length / 5);
});
