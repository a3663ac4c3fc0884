import { RetryableError } from '../../../connectors/errors';
import { TRUNCATION_MARKER } from '../../../connectors/google-sheets';
import { collectGarbageOften } from '../../helpers/gc';
import { waitFor } from '../../helpers/wait';
import { event, OK, rowsOf, startHarness, type Harness } from './harness';

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(() => h.close());

const TAB = 'events_2026_11';

test('events are appended under a header that grows at the right; values keep their types', async () => {
  const w = await h.open();
  const first = [event(h.clock, { plan: 'pro', n: 3 }), event(h.clock, { ok: true, cart: { items: [1, 2] } })];
  expect(await h.write(w, first)).toEqual([OK, OK]);
  await h.write(w, [event(h.clock, { n: 1.5, coupon: null, later: 'x' })]);
  const values = h.tab(TAB);
  expect(values[0]).toEqual(['_id', '_uid', '_sid', '_event', '_event_at', '_received_at', 'plan', 'n', 'ok', 'cart', 'later']);
  expect(rowsOf(values).map(({ _id, _event_at, _received_at, ...rest }) => rest)).toEqual([
    { _event: 'view', plan: 'pro', n: 3 },
    { _event: 'view', ok: true, cart: '{"items":[1,2]}' },
    { _event: 'view', n: 1.5, later: 'x' },
  ]);
  expect(rowsOf(values)[0]).toMatchObject({ _id: first[0]!.id, _event_at: first[0]!.eventAt, _received_at: first[0]!.receivedAt });
  // Per flush one values.batchUpdate for the header cells and the rows, each at its own row; the new
  // tab (with rows ahead), then the grid widened for `later`, one spreadsheets.batchUpdate each.
  const writes = h.fake.counts((r) => !['spreadsheets.get', 'values.batchGet'].includes(r.method));
  expect(writes).toEqual({ 'spreadsheets.batchUpdate': 2, 'values.batchUpdate': 2 });
  expect(h.fake.sheet(h.spreadsheetId, TAB).columnCount).toBe(11);
});

test('formula-looking strings stay text, long strings are cut with the marker', async () => {
  const w = await h.open();
  const long = 'é'.repeat(60_000);
  await h.write(w, [event(h.clock, { f: '=IMPORTXML("https://evil.example","//a")', zip: '00123', long })]);
  const sheet = h.fake.sheet(h.spreadsheetId, TAB);
  const header = rowsOf(h.tab(TAB))[0]!;
  expect(header.f).toBe('=IMPORTXML("https://evil.example","//a")');
  expect(sheet.cell(2, 7)).toEqual({ t: 's', v: '=IMPORTXML("https://evil.example","//a")' });
  expect(sheet.cell(2, 8)).toEqual({ t: 's', v: '00123' });
  const cut = String(header.long);
  expect(cut).toHaveLength(50_000);
  expect(cut.endsWith(TRUNCATION_MARKER)).toBe(true);
});

test('columns reordered, added and renamed by hand: each value goes under the header that names it', async () => {
  const w = await h.open();
  await h.write(w, [event(h.clock, { plan: 'free', seats: 1 })]);
  const sheet = h.fake.sheet(h.spreadsheetId, TAB);
  sheet.moveColumn(8, 1); // seats first
  sheet.moveColumn(8, 3); // plan third
  sheet.insertColumns(9, 1);
  sheet.set(1, 9, { t: 's', v: 'notes (mine)' });
  sheet.set(2, 9, { t: 's', v: 'call back' });
  await h.write(w, [event(h.clock, { plan: 'pro', seats: 5, color: 'red' })]);
  const values = h.tab(TAB);
  expect(values[0]).toEqual(['seats', '_id', 'plan', '_uid', '_sid', '_event', '_event_at', '_received_at', 'notes (mine)', 'color']);
  expect(rowsOf(values).map((r) => [r.seats, r.plan, r.color, r['notes (mine)']])).toEqual([
    [1, 'free', undefined, 'call back'],
    [5, 'pro', 'red', undefined],
  ]);
});

test('a response lost after the write landed: the retry finds the rows and does not double them', async () => {
  const w = await h.open();
  await h.write(w, [event(h.clock, { n: 0 })]);
  const batch = [event(h.clock, { n: 1 }), event(h.clock, { n: 2 })];
  h.fake.faults.add({ kind: 'lose-response' }, { method: 'values.batchUpdate' });
  const err = await h.write(w, batch).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(RetryableError);
  expect((err as RetryableError).details.reason).toBe('no-response');
  expect(rowsOf(h.tab(TAB))).toHaveLength(3);
  // The delivery loop sends the same batch again, maybe with more records behind it.
  const more = event(h.clock, { n: 3 });
  expect(await h.write(w, [...batch, more])).toEqual([OK, OK, OK]);
  expect(rowsOf(h.tab(TAB)).map((r) => r.n)).toEqual([0, 1, 2, 3]);
});

test('after a restart, a batch that landed before the crash is found at the end of the tab', async () => {
  const before = await h.open();
  const batch = [event(h.clock, { n: 1 }), event(h.clock, { n: 2 })];
  await h.write(before, batch);
  const after = await h.open();
  expect(await h.write(after, batch)).toEqual([OK, OK]);
  expect(rowsOf(h.tab(TAB))).toHaveLength(2);
});

test('5xx and timeouts: RetryableError, nothing doubled, and googleapis itself retries nothing', async () => {
  // Long enough that an answering call on a busy machine is never taken for a hung one.
  const w = await h.open({ requestTimeoutMs: 1000 });
  await h.write(w, [event(h.clock, { n: 0 })]);
  const batch = [event(h.clock, { n: 1 })];
  h.fake.faults.add({ kind: 'status', status: 503 }, { method: 'values.batchGet' });
  await expect(h.write(w, batch)).rejects.toMatchObject({ kind: 'retryable', details: { status: 503 } });
  expect(h.fake.counts((r) => r.status === 503)).toEqual({ 'values.batchGet': 1 });
  h.fake.faults.add({ kind: 'status', status: 500 }, { method: 'values.batchUpdate' });
  await expect(h.write(w, batch)).rejects.toMatchObject({ kind: 'retryable', details: { status: 500 } });
  h.fake.faults.add({ kind: 'hang' }, { method: 'values.batchUpdate' });
  await expect(h.write(w, batch)).rejects.toMatchObject({ kind: 'retryable', details: { reason: 'no-response' } });
  await h.write(w, batch);
  expect(rowsOf(h.tab(TAB)).map((r) => r.n)).toEqual([0, 1]);
  expect(h.fake.counts((r) => r.method === 'values.batchUpdate')).toEqual({ 'values.batchUpdate': 4 });
});

test('a call that never answers is given up at requestTimeoutMs even while garbage is collected, then retried once', async () => {
  // Long enough that an answering call on a busy machine is never taken for a hung one.
  const w = await h.open({ requestTimeoutMs: 1000 });
  await h.write(w, [event(h.clock, { n: 0 })]);
  const batch = [event(h.clock, { n: 1 }), event(h.clock, { n: 2 })];
  const stopGc = collectGarbageOften(100);
  try {
    h.fake.faults.add({ kind: 'hang' }, { method: 'values.batchGet' });
    await expect(h.write(w, batch)).rejects.toMatchObject({ kind: 'retryable', details: { reason: 'no-response' }, message: expect.stringContaining('values.batchGet did not answer within 1000 ms') });
    h.fake.faults.add({ kind: 'hang' }, { method: 'values.batchUpdate' });
    await expect(h.write(w, batch)).rejects.toMatchObject({ kind: 'retryable', details: { reason: 'no-response' } });
  } finally {
    stopGc();
  }
  expect(await h.write(w, batch)).toEqual([OK, OK]);
  expect(rowsOf(h.tab(TAB)).map((r) => r.n)).toEqual([0, 1, 2]);
}, 15_000);

test('a write Google applies after the relay gave up, read again and wrote the batch: the same cells, nothing doubled, nothing lost', async () => {
  const w = await h.open({ requestTimeoutMs: 300 });
  await h.write(w, [event(h.clock, { n: 0 })]);
  const batch = [event(h.clock, { n: 1 }), event(h.clock, { n: 2 })];
  // The relay gives up at 300 ms; Google applies the call at 1 500 ms, after the retry below read the tab and wrote.
  h.fake.faults.add({ kind: 'apply-late', afterMs: 1500 }, { method: 'values.batchUpdate' });
  await expect(h.write(w, batch)).rejects.toMatchObject({ kind: 'retryable', details: { reason: 'no-response' } });
  const later = event(h.clock, { n: 3 });
  expect(await h.write(w, [...batch, later])).toEqual([OK, OK, OK]);
  expect(rowsOf(h.tab(TAB)).map((r) => r.n)).toEqual([0, 1, 2, 3]);
  await waitFor(() => h.fake.late.length === 1, { timeoutMs: 5000, message: 'the late write applied' });
  // And after: a flush that follows it.
  await h.write(w, [event(h.clock, { n: 4 })]);
  expect(rowsOf(h.tab(TAB)).map((r) => r.n)).toEqual([0, 1, 2, 3, 4]);
}, 15_000);

test('a new writer (a restart) re-sends a batch whose first write Google applies later: the same rows, nothing doubled', async () => {
  const first = await h.open({ requestTimeoutMs: 300 });
  await h.write(first, [event(h.clock, { n: 0 })]);
  const batch = [event(h.clock, { n: 1 }), event(h.clock, { n: 2 })];
  h.fake.faults.add({ kind: 'apply-late', afterMs: 1500 }, { method: 'values.batchUpdate' });
  await expect(h.write(first, batch)).rejects.toMatchObject({ kind: 'retryable' });
  const second = await h.open();
  expect(await second.write(batch, new AbortController().signal, { resend: true })).toEqual([OK, OK]);
  await waitFor(() => h.fake.late.length === 1, { timeoutMs: 5000, message: 'the late write applied' });
  expect(rowsOf(h.tab(TAB)).map((r) => r.n)).toEqual([0, 1, 2]);
}, 15_000);

test('rows past Google\'s recommended 2 MB a request go in several values.batchUpdate requests, each row at its place', async () => {
  const w = await h.open();
  const batch = Array.from({ length: 120 }, (_, n) => event(h.clock, { n, text: `${n}:${'x'.repeat(30_000)}` }));
  expect(await h.write(w, batch)).toEqual(batch.map(() => OK));
  expect(h.fake.counts((r) => r.method === 'values.batchUpdate')['values.batchUpdate']).toBeGreaterThanOrEqual(2);
  expect(rowsOf(h.tab(TAB)).map((r) => [r.n, String(r.text).split(':')[0]])).toEqual(batch.map((_, n) => [n, String(n)]));
});

test('monthly rollover: events go to the tab of their UTC month; a batch across midnight writes both', async () => {
  h.clock.set(Date.UTC(2026, 10, 30, 23, 59, 59));
  const w = await h.open();
  const november = event(h.clock, { n: 1 });
  h.clock.advance(2000);
  const december = event(h.clock, { n: 2 });
  await h.write(w, [november, december]);
  expect(rowsOf(h.tab('events_2026_11')).map((r) => r.n)).toEqual([1]);
  expect(rowsOf(h.tab('events_2026_12')).map((r) => r.n)).toEqual([2]);
  expect(w.capacity()).toMatchObject({ spreadsheetId: h.spreadsheetId, eventsTab: 'events_2026_12', maxCells: 9_500_000 });
  const single = await h.open({ rollover: 'none', tabs: { events: 'log' } });
  await h.write(single, [event(h.clock, { n: 3 })]);
  expect(rowsOf(h.tab('log')).map((r) => r.n)).toEqual([3]);
});

test('a re-send of history (a backfill, an import run again) is checked against every id of the tab, read whole once: an event older than the last 11 000 rows is not doubled', async () => {
  const w = await h.open();
  const history = Array.from({ length: 12_000 }, (_, n) => event(h.clock, { n }));
  for (let i = 0; i < history.length; i += 4000) await h.write(w, history.slice(i, i + 4000));
  expect(rowsOf(h.tab(TAB))).toHaveLength(12_000);

  // A writer that just opened (as after a restart) gets the oldest events again, with a new one.
  const later = await h.open();
  const fresh = event(h.clock, { n: 'new' });
  const reads = () => h.fake.counts((r) => r.method === 'values.batchGet')['values.batchGet'] ?? 0;
  /** Writes as a re-send; returns its outcomes and the values.batchGet requests it made (one a flush). */
  const resend = async (records: ReturnType<typeof event>[]) => {
    const before = reads();
    const outcomes = await later.write(records, new AbortController().signal, { resend: true });
    return { outcomes, reads: reads() - before };
  };
  expect(await resend([history[0]!, history[1]!, fresh])).toEqual({ outcomes: [OK, OK, OK], reads: 1 });
  expect(rowsOf(h.tab(TAB))).toHaveLength(12_001);
  // Again, with an event from the middle and the one just written: found in the ids kept, nothing appended.
  expect(await resend([history[5000]!, fresh])).toEqual({ outcomes: [OK, OK], reads: 1 });
  expect(rowsOf(h.tab(TAB))).toHaveLength(12_001);
  // A row another writer added after the last known one is still seen.
  const byHand = event(h.clock, { n: 'hand' });
  await h.write(w, [byHand]);
  expect(await resend([byHand])).toEqual({ outcomes: [OK], reads: 1 });
  expect(rowsOf(h.tab(TAB)).filter((r) => r.n === 'hand')).toHaveLength(1);
});
