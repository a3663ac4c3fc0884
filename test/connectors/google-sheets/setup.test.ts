import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigurationError, RetryableError } from '../../../connectors/errors';
import { event, OK, rowsOf, startHarness, user, type Harness } from './harness';

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(() => h.close());

const signal = () => new AbortController().signal;

test('destinations test creates the missing tabs with their headers, then proves write access', async () => {
  const w = await h.open();
  await w.test(signal());
  expect(h.tab('users')).toEqual([['_id', '_uid', '_received_at']]);
  expect(h.tab('sessions')).toEqual([['_id', '_uid', '_sid', '_received_at']]);
  expect(h.tab('events_2026_11')).toEqual([['_id', '_uid', '_sid', '_event', '_event_at', '_received_at']]);
  expect(h.fake.sheet(h.spreadsheetId, 'users').props.gridProperties).toEqual({ rowCount: 2, columnCount: 3, frozenRowCount: 1 });
  const writes = h.fake.requests.length;
  await w.test(signal());
  // Everything exists: one harmless write (a tab renamed to its own name) shows we may write.
  expect(h.fake.requests.slice(writes).map((r) => r.method)).toEqual(['spreadsheets.get', 'values.batchGet', 'spreadsheets.batchUpdate']);
});

test('createSpreadsheet: created once, its id kept in the data directory and reused', async () => {
  const w = await h.open({ spreadsheetId: undefined, createSpreadsheet: true, title: 'Shop data' });
  await w.test(signal());
  const id = w.capacity().spreadsheetId!;
  expect(id).not.toBe(h.spreadsheetId);
  const file = path.join(h.dataDir, 'google-sheets', 'shop', 'sheets.json');
  expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ spreadsheetId: id, title: 'Shop data' });
  const again = await h.open({ spreadsheetId: undefined, createSpreadsheet: true });
  await h.write(again, [user(h.clock, 'u1', { plan: 'pro' })]);
  expect(h.fake.counts()['spreadsheets.create']).toBe(1);
  expect(rowsOf(h.fake.values(id, 'users'))).toMatchObject([{ _uid: 'u1', plan: 'pro' }]);
  expect(h.fake.spreadsheets.get(id)!.title).toBe('Shop data');
  expect(existsSync(file)).toBe(true);
});

test('createSpreadsheet with a service account, which Google lets own no files: a ConfigurationError saying what to do', async () => {
  h.fake.noStorage.add('anonymous');
  const w = await h.open({ spreadsheetId: undefined, createSpreadsheet: true });
  const err = await w.test(signal()).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ConfigurationError);
  expect((err as Error).message).toMatch(/^Google refused to create the spreadsheet \(The user's Drive storage quota has been exceeded\.\): a service account owns no Drive storage.* set spreadsheetId to its id instead of createSpreadsheet\.$/);
  expect(existsSync(path.join(h.dataDir, 'google-sheets', 'shop', 'sheets.json'))).toBe(false);
});

test('wrong id, no permission, API disabled: ConfigurationError with a readable message', async () => {
  const missing = await h.open({ spreadsheetId: 'x'.repeat(44) });
  await expect(missing.test(signal())).rejects.toThrow(ConfigurationError);
  await expect(missing.test(signal())).rejects.toThrow(`No such spreadsheet: ${'x'.repeat(44)} was not found. Check the address`);
  const w = await h.open();
  h.fake.denied.add('anonymous');
  await expect(h.write(w, [event(h.clock)])).rejects.toThrow(/spreadsheet .* is not shared with anonymous at http:\/\/127\.0\.0\.1:\d+\/: share it with the service account whose credentials the relay uses/);
  h.fake.denied.clear();
  h.fake.apiDisabled = true;
  await expect(w.test(signal())).rejects.toMatchObject({ kind: 'configuration', details: { reason: 'SERVICE_DISABLED' } });
});

test('a service-account key, pasted or as a file: its e-mail in every message; not shared, then deleted: the next step to take', async () => {
  const key = h.fake.accounts.create('tributary');
  const email = 'tributary@tributary-test.iam.gserviceaccount.com';
  // With the fake's endpoint the key signs its own JWTs, which the fake checks against the key.
  const pasted = await h.open({ credentials: { ...key } });
  await pasted.test(signal());
  expect(h.fake.requests.at(-1)!.credential).toBe(email);

  const file = path.join(h.dataDir, 'key.json');
  writeFileSync(file, JSON.stringify(key), { mode: 0o600 });
  const fromFile = await h.open({ keyFile: file });
  h.fake.denied.add(email);
  await expect(fromFile.test(signal())).rejects.toThrow(`spreadsheet ${h.spreadsheetId} is not shared with ${email}: open it, click Share, paste ${email}, choose Editor, and send.`);
  h.fake.denied.clear();

  h.fake.accounts.deleteKey(key.private_key_id);
  const refused = await pasted.test(signal()).catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(ConfigurationError);
  expect((refused as Error).message).toMatch(new RegExp(`^Google refused the key of ${email.replace(/\./g, '\\.')}: it was deleted or disabled`));
});

test('capacity with whenFull: pause: delivery pauses before the cell limit, and resumes once an old month is deleted', async () => {
  await h.close();
  h = await startHarness({ cellLimit: 1_000 });
  h.clock.set(Date.UTC(2026, 9, 31, 12));
  const w = await h.open({ maxCells: 900, whenFull: 'pause' });
  // Sheet1 holds 26 000 cells in a real new spreadsheet; here the whole book may hold 1 000.
  const ss = h.fake.spreadsheets.get(h.spreadsheetId)!;
  ss.sheets[0]!.props.gridProperties = { rowCount: 10, columnCount: 10 };
  await h.write(w, Array.from({ length: 90 }, (_, i) => event(h.clock, { i })));
  h.clock.set(Date.UTC(2026, 10, 1, 12));
  const err = await h.write(w, Array.from({ length: 50 }, (_, i) => event(h.clock, { i }))).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ConfigurationError);
  expect((err as Error).message).toMatch(/is full: \d+ of 900 cells used .* download and delete old events_YYYY_MM tabs/);
  expect(w.capacity()).toMatchObject({ maxCells: 900, eventsTab: 'events_2026_11' });
  // Someone archives October.
  ss.sheets = ss.sheets.filter((s) => s.title !== 'events_2026_10');
  const batch = Array.from({ length: 50 }, (_, i) => event(h.clock, { i }));
  expect(await h.write(w, batch)).toHaveLength(50);
  expect(rowsOf(h.tab('events_2026_11'))).toHaveLength(50);
  expect(w.capacity().cells).toBeLessThanOrEqual(900);
});

test('a tab deleted or shrunk by hand: a RetryableError, then the writer finds its way again', async () => {
  const w = await h.open();
  await h.write(w, [user(h.clock, 'u1', { n: 1 }), event(h.clock, { n: 1 })]);
  const ss = h.fake.spreadsheets.get(h.spreadsheetId)!;
  ss.sheets = ss.sheets.filter((s) => s.title !== 'users');
  const batch = [user(h.clock, 'u1', { n: 2 })];
  await expect(h.write(w, batch)).rejects.toMatchObject({ kind: 'retryable', details: { reason: 'layout-changed' } });
  expect(await h.write(w, batch)).toEqual([OK]);
  expect(rowsOf(h.tab('users'))).toMatchObject([{ _uid: 'u1', n: 2 }]);
  h.fake.sheet(h.spreadsheetId, 'users').deleteColumns(4, 1);
  const next = [user(h.clock, 'u1', { n: 3, m: 1 })];
  const err = await h.write(w, next).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(RetryableError);
  expect(await h.write(w, next)).toEqual([OK]);
  expect(rowsOf(h.tab('users'))).toMatchObject([{ _uid: 'u1', n: 3, m: 1 }]);
});
