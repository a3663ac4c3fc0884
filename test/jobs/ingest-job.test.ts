import { newIngestJob, queuedLines, queuedTexts, UnreadableJobError, type QueuedJobData } from '../../jobs/routing/ingest-job';
import { entryFields, entryRecords, lineTexts } from '../../jobs/routing/stream-entries';
import type { TrackedRecord } from '../../src/core/records/types';

/** The receive time a job's records share travels once, and the router gives each line back its text. */
const AT = '2026-11-29T07:00:00.000Z';
const event = (id: string, receivedAt = AT, properties: TrackedRecord['properties'] = {}): TrackedRecord => ({ kind: 'event', id, receivedAt, uid: 'u', event: 'e', eventAt: receivedAt, properties });
const route = (records: TrackedRecord[]) => {
  const job = newIngestJob('t', records, false);
  return { job, texts: queuedTexts('1', JSON.parse(JSON.stringify(job.data)), job.lines) };
};

test('once a job: the lines leave it out, and the router writes back exactly the text the edge made', () => {
  const records = [
    event('a'),
    event('b"quoted","id":"x', AT, { nested: { receivedAt: 'not this one', list: [{ kind: 'event', id: 'inner' }] } }),
    event('c', '2026-11-29T07:00:00.001Z'),
    event(''),
  ];
  const { job, texts } = route(records);
  expect(job.data.at).toBe(AT);
  const lines = job.lines.split('\n');
  expect(lines[0]).not.toContain('"receivedAt"');
  expect(lines[2]).toContain('"receivedAt":"2026-11-29T07:00:00.001Z"');
  expect(lines[1]).toContain('"receivedAt":"not this one"');
  expect(texts).toEqual(records.map((r) => JSON.stringify(r)));
  // What it saves: the 40 characters of each shared `,"receivedAt":"…"`.
  expect(records.map((r) => JSON.stringify(r)).join('\n').length - job.lines.length).toBe(3 * 40);
});

test('a record in another key order: nothing is left out, so nothing is written back twice', () => {
  const odd = { receivedAt: AT, kind: 'event', id: 'z', event: 'e', properties: {} } as unknown as TrackedRecord;
  const records = [event('a'), odd];
  const { job, texts } = route(records);
  expect(job.data.at).toBeUndefined();
  expect(texts).toEqual(records.map((r) => JSON.stringify(r)));
});

describe('the records as bytes (queuedLines), as the router reads them from Redis', () => {
  /** The records key as Redis gives it back undecoded, and the data through JSON (as BullMQ keeps it). */
  const stored = (records: TrackedRecord[]) => {
    const job = newIngestJob('t', records, false);
    return { data: JSON.parse(JSON.stringify(job.data)) as QueuedJobData, bytes: Buffer.from(job.lines) };
  };
  const records = [
    event('a', AT, { title: 'Tributary — relay', city: 'Zürich', word: '数据', emoji: '👩🏽‍💻' }),
    event('b', '2026-11-29T07:00:00.001Z', { note: 'has its own time' }),
    event('c', AT, { quote: '","id":"not the id', newline: 'one\ntwo' }),
    event('d'),
  ];

  test('every line gets its receive time back, whatever its characters, and the block reads back as the edge wrote it', () => {
    const { data, bytes } = stored(records);
    expect(data.v === 2 && data.at).toBe(AT);
    const lines = queuedLines('1', data, bytes);
    expect(lines.count).toBe(4);
    expect(lineTexts(lines)).toEqual(records.map((r) => JSON.stringify(r)));
    expect(entryRecords('1700-1', entryFields(lines)).map((r) => JSON.parse(r.json))).toEqual(records);
  });

  test('duplicates are left out by index, with or without a shared receive time', () => {
    const { data, bytes } = stored(records);
    expect(lineTexts(queuedLines('1', data, bytes, new Set([0, 2])))).toEqual([records[1], records[3]].map((r) => JSON.stringify(r)));
    // A record in another key order: the job shares no receive time, and its bytes go as they are.
    const own = [{ receivedAt: AT, kind: 'event', id: 'z', event: 'e', properties: {} } as unknown as TrackedRecord, ...records.slice(1)];
    const apart = stored(own);
    expect(apart.data.v === 2 && apart.data.at).toBeUndefined();
    expect(queuedLines('1', apart.data, apart.bytes).bytes).toBe(apart.bytes);
    expect(lineTexts(queuedLines('1', apart.data, apart.bytes, new Set([3])))).toEqual(own.slice(0, 3).map((r) => JSON.stringify(r)));
    expect(queuedLines('1', apart.data, apart.bytes, new Set([0, 1, 2, 3])).count).toBe(0);
  });

  test('records that do not match the job are refused, not routed', () => {
    const { data, bytes } = stored(records);
    expect(() => queuedLines('1', data, Buffer.concat([bytes, Buffer.from('\n{"kind":"event"}')]))).toThrow(new UnreadableJobError('ingest job 1 says it holds 4 records and its records key holds 5'));
    expect(() => queuedLines('1', data, Buffer.from('{"id":"x","kind":"event"}\n{}\n{}\n{}'))).toThrow(/not a record as the edge writes it: \{"id":"x"/);
    expect(() => queuedLines('1', data, null)).toThrow(/records are missing/);
  });
});
