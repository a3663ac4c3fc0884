import { ConfigurationError } from '../../../connectors/errors';
import type { GoogleSheetsSettings } from '../../../connectors/google-sheets';
import { CONTINUATION_KEY } from '../../../connectors/google-sheets/continuation';
import type { TrackedRecord } from '../../../src/core/records/types';
import { event, OK, rowsOf, startHarness, user, type Harness } from './harness';

/**
 * At the cell limit events move on to a new spreadsheet, recorded in the destination's own; users
 * and sessions stay. A fake that holds 10 000 cells per spreadsheet and a destination that keeps
 * under 1 000 make the limit reachable in a test; the fake would refuse like Google past its limit.
 */
let h: Harness;
const SETTINGS: Partial<GoogleSheetsSettings> = { maxCells: 1000, rollover: 'none' };
beforeEach(async () => {
  h = await startHarness({ cellLimit: 10_000 });
  h.clock.set(Date.UTC(2026, 10, 20, 12));
  // A new spreadsheet's Sheet1 holds 26 000 cells; here it is one cell.
  h.fake.spreadsheets.get(h.spreadsheetId)!.sheets[0]!.props.gridProperties = { rowCount: 1, columnCount: 1 };
});
afterEach(() => h.close());

const events = (n: number, props: Record<string, unknown> = {}) => Array.from({ length: n }, (_, i) => event(h.clock, { n: i, ...props }));
const ok = (n: number) => Array.from({ length: n }, () => OK);
const others = () => [...h.fake.spreadsheets.values()].filter((s) => s.id !== h.spreadsheetId);
/** Every event id stored in any spreadsheet, with how many times. */
function storedIds(): Map<string, number> {
  const ids = new Map<string, number>();
  for (const ss of h.fake.spreadsheets.values()) {
    const tab = ss.sheetByTitle('events');
    if (!tab) continue;
    for (const row of rowsOf(h.fake.values(ss.id, 'events'))) ids.set(String(row._id), (ids.get(String(row._id)) ?? 0) + 1);
  }
  return ids;
}
const refusedByGoogle = () => h.fake.requests.filter((r) => r.status === 400);

/** The destination's spreadsheet at 937 of 1 000 cells: a user, and 115 events with a `page` column, each in the row after the last (new tabs hold their header and one row). */
async function fill(): Promise<void> {
  const w = await h.open(SETTINGS);
  expect(await h.write(w, [user(h.clock, 'u1', { plan: 'free' })])).toEqual([OK]);
  expect(await h.write(w, events(115, { page: '/' }))).toEqual(ok(115));
  expect(w.capacity()).toMatchObject({ cells: 1 + 2 * 4 + 116 * 8, eventsSpreadsheetId: undefined });
}

test('events that do not fit go to a new spreadsheet with the same tab and header; users stay; nothing refused by Google', async () => {
  await fill();
  const w = await h.open(SETTINGS);
  const batch = [...events(20, { page: '/x', ref: 'ad' }), user(h.clock, 'u1', { plan: 'pro' }), user(h.clock, 'u2', { plan: 'free' })];
  expect(await h.write(w, batch)).toEqual(ok(22));

  expect(others()).toHaveLength(1);
  const next = others()[0]!;
  expect(next.title).toBe('Tributary test · events 2');
  // The columns of the full spreadsheet's tab, in its order, then the new one.
  expect(h.fake.values(next.id, 'events')[0]).toEqual(['_id', '_uid', '_sid', '_event', '_event_at', '_received_at', 'n', 'page', 'ref']);
  expect(rowsOf(h.fake.values(next.id, 'events'))).toHaveLength(20);
  expect(next.sheets.map((s) => s.title)).toEqual(['events']);
  expect(rowsOf(h.tab('events'))).toHaveLength(115);
  expect(rowsOf(h.tab('users'))).toMatchObject([
    { _uid: 'u1', plan: 'pro' },
    { _uid: 'u2', plan: 'free' },
  ]);
  // Recorded where every worker finds it.
  const home = h.fake.spreadsheets.get(h.spreadsheetId)!;
  expect(home.developerMetadata).toHaveLength(1);
  expect(home.developerMetadata[0]).toMatchObject({ metadataKey: CONTINUATION_KEY, visibility: 'DOCUMENT' });
  expect(JSON.parse(home.developerMetadata[0]!.metadataValue!)).toEqual({ spreadsheetId: next.id, title: 'Tributary test · events 2', createdAt: '2026-11-20T12:00:00.000Z' });
  expect(w.details()).toMatchObject({ spreadsheetId: h.spreadsheetId, eventsSpreadsheetId: next.id, eventsSpreadsheetUrl: `https://docs.google.com/spreadsheets/d/${next.id}/edit`, eventsCells: 21 * 9 });
  expect(refusedByGoogle()).toEqual([]);
  expect([...storedIds().values()].every((n) => n === 1)).toBe(true);
  expect(storedIds().size).toBe(135);
});

test('a restarted writer, and destinations test, find the continuation: events there, users at home', async () => {
  await fill();
  expect(await h.write(await h.open(SETTINGS), events(20))).toEqual(ok(20));
  const next = others()[0]!;
  const restarted = await h.open(SETTINGS);
  expect(await h.write(restarted, [...events(5), user(h.clock, 'u3', { plan: 'pro' })])).toEqual(ok(6));
  expect(rowsOf(h.fake.values(next.id, 'events'))).toHaveLength(25);
  expect(rowsOf(h.tab('events'))).toHaveLength(115);
  expect(rowsOf(h.tab('users')).map((r) => r._uid)).toEqual(['u1', 'u3']);
  const report = await (await h.open(SETTINGS)).test(new AbortController().signal);
  expect(report.notes.join('\n')).toContain(`events continue in spreadsheet ${next.id} (https://docs.google.com/spreadsheets/d/${next.id}/edit)`);
  expect(report.notes.join("\n")).toContain("share it with the people who should see it");
  expect(others()).toHaveLength(1);
});

test('exactly once across the switch: a batch partly in the full spreadsheet and partly in the new one, re-sent after a crash', async () => {
  await fill();
  const first = events(5);
  // The write lands, its answer is lost, the process dies.
  h.fake.faults.add({ kind: 'lose-response' }, { method: 'values.batchUpdate' });
  await expect(h.write(await h.open(SETTINGS), first)).rejects.toMatchObject({ kind: 'retryable' });
  // The restarted worker re-sends it with more: the first five are found at home, the rest does not fit and moves on; that answer is lost too.
  const more = [...first, ...events(20)];
  h.fake.faults.add({ kind: 'lose-response' }, { method: 'values.batchUpdate' });
  await expect((await h.open(SETTINGS)).write(more, new AbortController().signal, { resend: true })).rejects.toMatchObject({ kind: 'retryable' });
  expect(others()).toHaveLength(1);
  // Restarted again: the batch is looked for in both spreadsheets and written nowhere twice.
  const again = await h.open(SETTINGS);
  expect(await again.write(more, new AbortController().signal, { resend: true })).toEqual(ok(25));
  const ids = storedIds();
  expect(more.every((r) => ids.get(r.id) === 1)).toBe(true);
  expect(rowsOf(h.fake.values(others()[0]!.id, 'events'))).toHaveLength(20);
  expect(rowsOf(h.tab('events'))).toHaveLength(120);
  expect(refusedByGoogle()).toEqual([]);
});

test('a failure between creating the spreadsheet and recording it: retried, the records land once in the recorded one', async () => {
  await fill();
  const w = await h.open(SETTINGS);
  h.fake.faults.add({ kind: 'status', status: 503 }, { method: 'spreadsheets.batchUpdate' });
  const batch = events(20);
  await expect(h.write(w, batch)).rejects.toMatchObject({ kind: 'retryable' });
  expect(others()).toHaveLength(1);
  const orphan = others()[0]!.id;
  expect(await h.write(w, batch)).toEqual(ok(20));
  // The first one was never recorded: it stays empty, and the second takes the events.
  const recorded = w.capacity().eventsSpreadsheetId!;
  expect(recorded).not.toBe(orphan);
  expect(rowsOf(h.fake.values(orphan, 'events'))).toEqual([]);
  expect(rowsOf(h.fake.values(recorded, 'events'))).toHaveLength(20);
  expect(h.fake.spreadsheets.get(h.spreadsheetId)!.developerMetadata).toHaveLength(1);
});

test('the new spreadsheet fills up in turn: events move on again, each step recorded', async () => {
  await fill();
  const w = await h.open(SETTINGS);
  for (let i = 0; i < 3; i++) expect(await h.write(w, events(60))).toEqual(ok(60));
  const chain = h.fake.spreadsheets.get(h.spreadsheetId)!.developerMetadata.map((m) => JSON.parse(m.metadataValue!) as { spreadsheetId: string; title: string });
  expect(chain.map((c) => c.title)).toEqual(['Tributary test · events 2', 'Tributary test · events 3']);
  expect(storedIds().size).toBe(295);
  expect(w.capacity().eventsSpreadsheetId).toBe(chain[1]!.spreadsheetId);
  expect(refusedByGoogle()).toEqual([]);
});

test('monthly tabs: a new month after the switch gets its tab in the new spreadsheet', async () => {
  const monthly = { ...SETTINGS, rollover: 'monthly' } as const;
  const w = await h.open(monthly);
  expect(await h.write(w, events(125))).toEqual(ok(125));
  expect(await h.write(w, events(20))).toEqual(ok(20));
  const next = others()[0]!;
  h.clock.set(Date.UTC(2026, 11, 1, 0, 5));
  expect(await h.write(w, events(3))).toEqual(ok(3));
  expect(next.sheets.map((s) => s.title)).toEqual(['events_2026_11', 'events_2026_12']);
  expect(h.fake.spreadsheets.get(h.spreadsheetId)!.sheetByTitle('events_2026_12')).toBeUndefined();
});

test('users and sessions that do not fit pause delivery with a message naming the limit; nothing moves', async () => {
  await fill();
  const w = await h.open(SETTINGS);
  const many: TrackedRecord[] = Array.from({ length: 20 }, (_, i) => user(h.clock, `new-${i}`, { plan: 'free' }));
  const err = await h.write(w, many).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ConfigurationError);
  expect((err as Error).message).toMatch(new RegExp(`spreadsheet ${h.spreadsheetId} is full for users and sessions: \\d+ of 1000 cells used .*Google's limit is 10000000 per spreadsheet.*Users and sessions always stay in this spreadsheet`));
  expect(others()).toEqual([]);
  // With events in the batch too, the events do not move on while the users cannot be written.
  const mixed = await h.write(w, [...many, ...events(20)]).catch((e: unknown) => e);
  expect(mixed).toBeInstanceOf(ConfigurationError);
  expect(others()).toEqual([]);
});

test('whenFull: pause keeps the old behaviour: no spreadsheet is created', async () => {
  await fill();
  const w = await h.open({ ...SETTINGS, whenFull: 'pause' });
  await expect(h.write(w, events(20))).rejects.toMatchObject({ kind: 'configuration', details: { reason: 'capacity' } });
  expect(others()).toEqual([]);
});

test('a continuation deleted by hand: delivery pauses with a message saying where events went and how to start over', async () => {
  await fill();
  expect(await h.write(await h.open(SETTINGS), events(20))).toEqual(ok(20));
  const next = others()[0]!.id;
  h.fake.spreadsheets.delete(next);
  const err = await h.write(await h.open(SETTINGS), events(1)).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ConfigurationError);
  expect((err as Error).message).toContain(`spreadsheet ${next}, where the events of spreadsheet ${h.spreadsheetId} continue since it was full, was not found (deleted?): set a new spreadsheetId to start over`);
});

test('a service account cannot create spreadsheets: delivery pauses with what to do, nothing created, records kept', async () => {
  await fill();
  h.fake.noStorage.add('anonymous');
  const w = await h.open(SETTINGS);
  const err = await h.write(w, events(20)).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ConfigurationError);
  expect((err as Error).message).toContain(`spreadsheet ${h.spreadsheetId} is full and Google refused to create one for the events that follow (The user's Drive storage quota has been exceeded.)`);
  expect((err as Error).message).toContain('add its id to nextSpreadsheetIds');
  expect(others()).toEqual([]);
  expect(h.fake.spreadsheets.get(h.spreadsheetId)!.developerMetadata).toEqual([]);
});

test('nextSpreadsheetIds: events continue in the owner’s own spreadsheets, in order; once used up, one is created', async () => {
  await fill();
  // Spreadsheets the owner made and shared with the service account: one has a tab of its own.
  const mine = [h.fake.createSpreadsheet('Shop events 2', [{ title: 'notes', rowCount: 2, columnCount: 2 }]).id, h.fake.createSpreadsheet('Shop events 3', [{ title: 'Sheet1', rowCount: 1, columnCount: 1 }]).id];
  const settings = { ...SETTINGS, nextSpreadsheetIds: mine };
  const w = await h.open(settings);
  expect(await h.write(w, events(60, { page: '/a' }))).toEqual(ok(60));
  expect(w.capacity().eventsSpreadsheetId).toBe(mine[0]);
  expect(h.fake.values(mine[0]!, 'events')[0]).toEqual(['_id', '_uid', '_sid', '_event', '_event_at', '_received_at', 'n', 'page']);
  expect(h.fake.spreadsheets.get(mine[0]!)!.sheets.map((s) => s.title)).toEqual(['notes', 'events']);
  // Two batches fill each spreadsheet.
  for (let i = 0; i < 4; i++) expect(await h.write(w, events(60))).toEqual(ok(60));
  const chain = h.fake.spreadsheets.get(h.spreadsheetId)!.developerMetadata.map((m) => (JSON.parse(m.metadataValue!) as { spreadsheetId: string }).spreadsheetId);
  expect(chain.slice(0, 2)).toEqual(mine);
  expect(chain).toHaveLength(3);
  expect(h.fake.counts()['spreadsheets.create']).toBe(1);
  expect(storedIds().size).toBe(115 + 300);
  expect([...storedIds().values()].every((n) => n === 1)).toBe(true);
  expect(refusedByGoogle()).toEqual([]);
});
