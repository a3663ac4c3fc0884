import { gzipSync } from 'node:zlib';
import { importedRecordId, importRecords, importRefusal, type ImportSink } from '../../src/core/import/importer';
import { csvValue, formatOfName, importInputOf, readImport, type ImportItem } from '../../src/core/import/reader';
import { loadConfig } from '../../src/core/config';
import type { TrackedRecord } from '../../src/core/records/types';
import { TrackerSchema } from '../../src/core/trackers/types';

/** The import's reading and checking, without Redis: formats, line numbers, typing of CSV cells, deterministic ids. */

async function items(text: string | Buffer, format: 'ndjson' | 'csv' | 'json', gzip = false): Promise<ImportItem[]> {
  const out: ImportItem[] = [];
  for await (const item of readImport(importInputOf(text), format, gzip)) out.push(item);
  return out;
}

test('formats by file name, gzip included', () => {
  expect(formatOfName('a.ndjson')).toEqual({ format: 'ndjson', gzip: false });
  expect(formatOfName('A.JSONL.GZ')).toEqual({ format: 'ndjson', gzip: true });
  expect(formatOfName('x.json')).toEqual({ format: 'json', gzip: false });
  expect(formatOfName('x.csv.gz')).toEqual({ format: 'csv', gzip: true });
  expect(formatOfName('x.txt').format).toBeUndefined();
});

test('NDJSON: line numbers count blank lines and CRLF; a bad line is an error item, integers beyond 2^53 keep their digits', async () => {
  const got = await items(gzipSync('{"a":1}\r\n\r\n{"b":\n[1]\n{"n":603851970716743426}\n'), 'ndjson', true);
  expect(got.map((i) => [i.line, i.error?.code ?? 'ok'])).toEqual([[1, 'ok'], [3, 'ERR_MALFORMED_JSON'], [4, 'ERR_INVALID_PAYLOAD'], [5, 'ok']]);
  expect(got[3]!.value).toEqual({ n: 603851970716743426n });
});

test('CSV: a quoted newline, the row’s end line as its number, a row with too many cells reported and skipped', async () => {
  const got = await items('\ufeffname, note\nann,"two\nlines"\nbob,x,extra\ncid,\n', 'csv');
  expect(got.map((i) => [i.line, i.error?.code ?? 'ok'])).toEqual([[3, 'ok'], [4, 'ERR_MALFORMED_BODY'], [5, 'ok']]);
  expect(got[0]!.value).toEqual({ name: 'ann', note: 'two\nlines' });
  expect(got[2]!.value).toEqual({ name: 'cid' });
});

test('CSV cells typed as a reader of the sheet would', () => {
  expect([csvValue('12'), csvValue('-3.5'), csvValue('0'), csvValue('0.25')]).toEqual([12, -3.5, 0, 0.25]);
  expect([csvValue('01234'), csvValue('1e5'), csvValue('9007199254740993'), csvValue(' 12'), csvValue('12.')]).toEqual(['01234', '1e5', '9007199254740993', ' 12', '12.']);
  expect([csvValue('true'), csvValue('false'), csvValue('TRUE'), csvValue('')]).toEqual([true, false, 'TRUE', undefined]);
});

test('a JSON array: its elements by place; anything else refused whole', async () => {
  const got = await items('[{"a":1}, 2, {"b":2}]', 'json');
  expect(got.map((i) => [i.line, i.error?.code ?? 'ok'])).toEqual([[1, 'ok'], [2, 'ERR_INVALID_PAYLOAD'], [3, 'ok']]);
  await expect(items('{"a":1}', 'json')).rejects.toThrow('one JSON array');
});

test('importedRecordId: a UUID (version 8), the same for the same tracker, kind, line and text, else different', () => {
  const id = importedRecordId('shop', 'event', 3, '{"_event":"x"}');
  expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  expect(importedRecordId('shop', 'event', 3, '{"_event":"x"}')).toBe(id);
  expect(new Set([id, importedRecordId('shop', 'event', 4, '{"_event":"x"}'), importedRecordId('shop', 'user', 3, '{"_event":"x"}'), importedRecordId('blog', 'event', 3, '{"_event":"x"}')]).size).toBe(4);
});

test('importedRecordId with an event time: that time in the first 48 bits, so ids grow with it; the rest still from the line', () => {
  const at = Date.parse('2025-03-01T12:00:00.123Z');
  const id = importedRecordId('shop', 'event', 3, '{"_event":"x"}', at);
  expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  expect(parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(at);
  expect(importedRecordId('shop', 'event', 3, '{"_event":"x"}', at)).toBe(id);
  expect(importedRecordId('shop', 'event', 4, '{"_event":"x"}', at)).not.toBe(id);
  const later = importedRecordId('shop', 'event', 2, '{"_event":"y"}', at + 1);
  expect(later > id).toBe(true);
  // Before 1970 there is no such prefix: the line's hash alone, as without a time.
  expect(importedRecordId('shop', 'event', 3, '{"_event":"x"}', -1)).toBe(importedRecordId('shop', 'event', 3, '{"_event":"x"}'));
});

test('importRecords: checked as the edge checks, batched by partition, a given _id kept, an _id repeated in a batch kept once, _received_at ignored', async () => {
  const tracker = TrackerSchema.parse({ id: 'shop', name: 'Shop', tokens: [{ token: 'trk_aaaaaaaaaaaaaaaaaaaaaa' }], partitions: 2, destinations: [{ id: 'wh', type: 'local' }] });
  const written: Array<{ partition: number; records: readonly TrackedRecord[] }> = [];
  const sink: ImportSink = { write: async (_t, partition, records) => void written.push({ partition, records: records.values() }) };
  const lines = ['{"_event":"a","_uid":"u1","_received_at":"2020-01-01T00:00:00Z"}', '{"_event":"b","_id":"mine","_uid":"u2"}', '{"_event":"b","_id":"mine","_uid":"u2"}', '{"_uid":"u3"}', '{"_event":"c","_secret":1}'];
  const summary = await importRecords(readImport(importInputOf(lines.join('\n')), 'ndjson', false), { tracker, kind: 'event', limits: loadConfig({}).limits, sink, lineOffset: 10 });
  expect(summary).toEqual({
    read: 5,
    imported: 2,
    failed: 2,
    duplicates: 1,
    errors: [expect.objectContaining({ line: 14, code: 'ERR_MISSING_FIELD', field: '_event' }), expect.objectContaining({ line: 15, code: 'ERR_RESERVED_FIELD', field: '_secret' })],
  });
  const all = written.flatMap((w) => w.records);
  expect(all.map((r) => r.id).sort()).toEqual([importedRecordId('shop', 'event', 11, lines[0]!), 'mine'].sort());
  expect(all.every((r) => r.receivedAt > '2026')).toBe(true);
  expect(importRefusal({ ...tracker, destinations: [], archiveDays: 0 })).toMatch(/nowhere to go/);
  expect(importRefusal(tracker)).toBeUndefined();
});

test('importRecords: an event whose line gives _event_at has an id that grows with it, the same at every import; one without keeps the line hash', async () => {
  const tracker = TrackerSchema.parse({ id: 'shop', name: 'Shop', tokens: [{ token: 'trk_aaaaaaaaaaaaaaaaaaaaaa' }], destinations: [{ id: 'wh', type: 'local' }] });
  const lines = ['{"_event":"a","_event_at":"2025-01-02T00:00:00Z"}', '{"_event":"b","_event_at":"2025-01-03T01:00:00+01:00"}', '{"_event":"c"}'];
  const importOnce = async () => {
    const written: TrackedRecord[] = [];
    const sink: ImportSink = { write: async (_t, _p, records) => void written.push(...records.values()) };
    await importRecords(readImport(importInputOf(lines.join('\n')), 'ndjson', false), { tracker, kind: 'event', limits: loadConfig({}).limits, sink });
    return written.map((r) => r.id);
  };
  const ids = await importOnce();
  expect(await importOnce()).toEqual(ids);
  expect(ids).toEqual([
    importedRecordId('shop', 'event', 1, lines[0]!, Date.parse('2025-01-02T00:00:00Z')),
    importedRecordId('shop', 'event', 2, lines[1]!, Date.parse('2025-01-03T00:00:00Z')),
    importedRecordId('shop', 'event', 3, lines[2]!),
  ]);
  expect(ids[0]! < ids[1]!).toBe(true);
});
