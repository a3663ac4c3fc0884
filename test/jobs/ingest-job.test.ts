import { newIngestJob, queuedTexts } from '../../jobs/routing/ingest-job';
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
