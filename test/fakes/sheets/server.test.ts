import { sheets, type sheets_v4 } from 'googleapis/build/src/apis/sheets';
import { ManualClock, SheetsFake } from './';

let fake: SheetsFake;
let api: sheets_v4.Sheets;
const clock = new ManualClock();

beforeEach(async () => {
  fake = await SheetsFake.start({ clock: clock.now });
  api = sheets({ version: 'v4', rootUrl: fake.url, retry: false, fetchImplementation: fetch });
});
afterEach(() => fake.close());

/** The status and Google error body of a rejected call. */
async function failure(p: Promise<unknown>): Promise<{ status: number; error: { code: number; message: string; status: string; details?: unknown[] } }> {
  try {
    await p;
  } catch (err) {
    const res = (err as { response?: { status: number; data: { error: { code: number; message: string; status: string } } } }).response;
    if (!res) throw err;
    return { status: res.status, error: res.data.error };
  }
  throw new Error('expected the call to fail');
}

/** A raw request with a bearer token, for tests about credentials. */
async function raw(path: string, token: string, init: { method?: string; body?: unknown } = {}): Promise<{ status: number; body: unknown }> {
  const res = await fetch(new URL(path, fake.url), {
    method: init.method ?? 'GET',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    ...(init.body ? { body: JSON.stringify(init.body) } : {}),
  });
  return { status: res.status, body: await res.json() };
}

test('create, get, and values round trips on the real REST paths', async () => {
  const created = await api.spreadsheets.create({ requestBody: { properties: { title: 'Shop' }, sheets: [{ properties: { title: "Jon's tab" } }] } });
  const id = created.data.spreadsheetId!;
  expect(created.data.sheets?.[0]?.properties).toMatchObject({ title: "Jon's tab", gridProperties: { rowCount: 1000, columnCount: 26 } });
  const update = await api.spreadsheets.values.update({ spreadsheetId: id, range: "'Jon''s tab'!B2", valueInputOption: 'RAW', requestBody: { values: [['x', 2, true]] } });
  expect(update.data).toMatchObject({ updatedRange: "'Jon''s tab'!B2:D2", updatedRows: 1, updatedColumns: 3, updatedCells: 3 });
  const got = await api.spreadsheets.values.get({ spreadsheetId: id, range: "'Jon''s tab'!A1:D3" });
  expect(got.data).toEqual({ range: "'Jon''s tab'!A1:D3", majorDimension: 'ROWS', values: [[], ['', 'x', '2', 'TRUE']] });
  const batch = await api.spreadsheets.values.batchUpdate({
    spreadsheetId: id,
    requestBody: { valueInputOption: 'RAW', data: [{ range: "'Jon''s tab'!A1", values: [['h']] }, { range: "'Jon''s tab'!C2:D2", values: [[null, '']] }] },
  });
  expect(batch.data).toMatchObject({ totalUpdatedCells: 2, totalUpdatedSheets: 1 });
  const both = await api.spreadsheets.values.batchGet({ spreadsheetId: id, ranges: ["'Jon''s tab'!1:1", "'Jon''s tab'!B2:B"], valueRenderOption: 'UNFORMATTED_VALUE' });
  expect(both.data.valueRanges?.map((v) => v.values)).toEqual([[['h']], [['x']]]);
  expect(fake.values(id, "Jon's tab")).toEqual([['h'], ['', 'x', 2]]);
  await api.spreadsheets.values.clear({ spreadsheetId: id, range: "'Jon''s tab'!A1:Z2" });
  expect(fake.values(id, "Jon's tab")).toEqual([]);
  expect(fake.counts()).toEqual({ 'spreadsheets.create': 1, 'values.update': 1, 'values.get': 1, 'values.batchUpdate': 1, 'values.batchGet': 1, 'values.clear': 1 });
});

test('values.append finds the table, inserts rows after it and reports updatedRange', async () => {
  const ss = fake.createSpreadsheet('t', [{ title: 'events', rowCount: 3, columnCount: 3 }]);
  const append = (values: unknown[][], insertDataOption = 'INSERT_ROWS') =>
    api.spreadsheets.values.append({ spreadsheetId: ss.id, range: 'events!A:C', valueInputOption: 'RAW', insertDataOption, requestBody: { values } });
  const first = await append([['_id', 'n'], ['a', 1]]);
  expect(first.data.updates).toMatchObject({ updatedRange: 'events!A1:B2', updatedRows: 2 });
  expect(first.data.tableRange).toBeUndefined();
  const second = await append([['b', 2], ['c', 3, 'wide', 'wider']]);
  expect(second.data.tableRange).toBe('events!A1:C2');
  expect(second.data.updates?.updatedRange).toBe('events!A3:D4');
  // INSERT_ROWS grew the grid by the rows written; the 4th value widened it.
  expect(fake.sheet(ss.id, 'events').props.gridProperties).toMatchObject({ rowCount: 7, columnCount: 4 });
  const overwrite = await append([['d', 4]], 'OVERWRITE');
  expect(overwrite.data.updates?.updatedRange).toBe('events!A5:B5');
  expect(fake.sheet(ss.id, 'events').rowCount).toBe(7);
});

test('RAW keeps text as text; USER_ENTERED parses it like the UI', async () => {
  const ss = fake.createSpreadsheet();
  const write = (valueInputOption: string, range: string) => api.spreadsheets.values.update({ spreadsheetId: ss.id, range, valueInputOption, requestBody: { values: [['=IMPORTXML("http://x","//a")', '00123', 'TRUE']] } });
  await write('RAW', 'Sheet1!A1');
  await write('USER_ENTERED', 'Sheet1!A2');
  const sheet = fake.sheet(ss.id, 'Sheet1');
  expect([sheet.cell(1, 1), sheet.cell(1, 2), sheet.cell(1, 3)]).toEqual([{ t: 's', v: '=IMPORTXML("http://x","//a")' }, { t: 's', v: '00123' }, { t: 's', v: 'TRUE' }]);
  expect([sheet.cell(2, 1), sheet.cell(2, 2), sheet.cell(2, 3)]).toEqual([{ t: 'f', v: '=IMPORTXML("http://x","//a")' }, { t: 'n', v: 123 }, { t: 'b', v: true }]);
  const missing = await failure(api.spreadsheets.values.update({ spreadsheetId: ss.id, range: 'Sheet1!A1', requestBody: { values: [['x']] } }));
  expect(missing.error.message).toMatch(/valueInputOption/);
});

test('grid bounds, the 50 000-character cell limit and the cell limit answer 400 INVALID_ARGUMENT', async () => {
  const small = await SheetsFake.start({ cellLimit: 100 });
  const smallApi = sheets({ version: 'v4', rootUrl: small.url, retry: false, fetchImplementation: fetch });
  try {
    const ss = small.createSpreadsheet('t', [{ title: 'events', rowCount: 10, columnCount: 5 }]);
    const beyond = await failure(smallApi.spreadsheets.values.update({ spreadsheetId: ss.id, range: 'events!A11', valueInputOption: 'RAW', requestBody: { values: [['x']] } }));
    expect(beyond).toEqual({ status: 400, error: { code: 400, message: 'Range (events!A11) exceeds grid limits. Max rows: 10, max columns: 5', status: 'INVALID_ARGUMENT' } });
    const wide = await failure(smallApi.spreadsheets.values.update({ spreadsheetId: ss.id, range: 'events!E1', valueInputOption: 'RAW', requestBody: { values: [['x', 'y']] } }));
    expect(wide.error.message).toMatch(/exceeds grid limits/);
    const long = await failure(smallApi.spreadsheets.values.update({ spreadsheetId: ss.id, range: 'events!A1', valueInputOption: 'RAW', requestBody: { values: [['x'.repeat(50_001)]] } }));
    expect(long.error.message).toBe('Your input contains more than the maximum of 50000 characters in a single cell.');
    await smallApi.spreadsheets.values.update({ spreadsheetId: ss.id, range: 'events!A1', valueInputOption: 'RAW', requestBody: { values: [['x'.repeat(50_000)]] } });
    const grow = await failure(smallApi.spreadsheets.batchUpdate({ spreadsheetId: ss.id, requestBody: { requests: [{ appendDimension: { sheetId: 0, dimension: 'ROWS', length: 11 } }] } }));
    expect(grow.error.message).toBe('This action would increase the number of cells in the workbook above the limit of 100 cells.');
    const append = await failure(smallApi.spreadsheets.values.append({ spreadsheetId: ss.id, range: 'events!A:E', valueInputOption: 'RAW', insertDataOption: 'INSERT_ROWS', requestBody: { values: Array.from({ length: 11 }, () => ['y']) } }));
    expect(append.status).toBe(400);
    expect(small.sheet(ss.id, 'events').rowCount).toBe(10);
  } finally {
    await small.close();
  }
});

test('spreadsheets.batchUpdate: addSheet, appendDimension, updateSheetProperties, atomically', async () => {
  const ss = fake.createSpreadsheet();
  const res = await api.spreadsheets.batchUpdate({
    spreadsheetId: ss.id,
    requestBody: { requests: [{ addSheet: { properties: { title: 'users', gridProperties: { rowCount: 2, columnCount: 3, frozenRowCount: 1 } } } }, { appendDimension: { sheetId: 0, dimension: 'COLUMNS', length: 4 } }] },
  });
  expect(res.data.replies?.[0]?.addSheet?.properties).toMatchObject({ sheetId: 1, title: 'users', index: 1, gridProperties: { rowCount: 2, columnCount: 3, frozenRowCount: 1 } });
  expect(res.data.replies?.[1]).toEqual({});
  expect(fake.sheet(ss.id, 'Sheet1').columnCount).toBe(30);
  const dup = await failure(api.spreadsheets.batchUpdate({ spreadsheetId: ss.id, requestBody: { requests: [{ addSheet: { properties: { title: 'later' } } }, { addSheet: { properties: { title: 'USERS' } } }] } }));
  expect(dup.error.message).toBe('Invalid requests[1].addSheet: A sheet with the name "USERS" already exists. Please enter another name.');
  expect(fake.spreadsheets.get(ss.id)!.sheets.map((s) => s.title)).toEqual(['Sheet1', 'users']);
  await api.spreadsheets.batchUpdate({ spreadsheetId: ss.id, requestBody: { requests: [{ updateSheetProperties: { properties: { sheetId: 1, title: 'people', gridProperties: { rowCount: 50 } }, fields: 'title,gridProperties.rowCount' } }] } });
  const got = await api.spreadsheets.get({ spreadsheetId: ss.id, fields: 'sheets.properties', includeGridData: false });
  expect(got.data.sheets?.[1]?.properties).toMatchObject({ title: 'people', gridProperties: { rowCount: 50, columnCount: 3 } });
});

test('developer metadata at the spreadsheet level: created by batchUpdate, atomically, and returned by spreadsheets.get', async () => {
  const ss = fake.createSpreadsheet();
  const dm = { metadataKey: 'tributary.events', metadataValue: '{"a":1}', location: { spreadsheet: true }, visibility: 'DOCUMENT' };
  const res = await api.spreadsheets.batchUpdate({ spreadsheetId: ss.id, requestBody: { requests: [{ createDeveloperMetadata: { developerMetadata: dm } }] } });
  expect(res.data.replies?.[0]?.createDeveloperMetadata?.developerMetadata).toEqual({ metadataId: 1, metadataKey: 'tributary.events', metadataValue: '{"a":1}', location: { locationType: 'SPREADSHEET', spreadsheet: true }, visibility: 'DOCUMENT' });
  const noVisibility = await failure(api.spreadsheets.batchUpdate({ spreadsheetId: ss.id, requestBody: { requests: [{ createDeveloperMetadata: { developerMetadata: { ...dm, metadataKey: 'second' } } }, { createDeveloperMetadata: { developerMetadata: { metadataKey: 'x', location: { spreadsheet: true } } } }] } }));
  expect(noVisibility.error.message).toBe('Invalid requests[1].createDeveloperMetadata: Developer metadata must always have a visibility specified.');
  const got = await api.spreadsheets.get({ spreadsheetId: ss.id, fields: 'developerMetadata' });
  expect(got.data.developerMetadata?.map((m) => m.metadataKey)).toEqual(['tributary.events']);
});

test('a credential without Drive storage (a service account) cannot create a spreadsheet, but writes shared ones', async () => {
  const ss = fake.createSpreadsheet();
  fake.noStorage.add('anonymous');
  expect(await failure(api.spreadsheets.create({ requestBody: { properties: { title: 'x' } } }))).toEqual({ status: 403, error: { code: 403, message: "The user's Drive storage quota has been exceeded.", status: 'PERMISSION_DENIED' } });
  await api.spreadsheets.values.update({ spreadsheetId: ss.id, range: 'Sheet1!A1', valueInputOption: 'RAW', requestBody: { values: [['ok']] } });
  expect(fake.values(ss.id, 'Sheet1')).toEqual([['ok']]);
});

test('spreadsheets.create refuses a grid beyond the cell limit', async () => {
  const small = await SheetsFake.start({ cellLimit: 100 });
  try {
    const smallApi = sheets({ version: 'v4', rootUrl: small.url, retry: false, fetchImplementation: fetch });
    const refused = await failure(smallApi.spreadsheets.create({ requestBody: { properties: { title: 'big' } } }));
    expect(refused).toEqual({ status: 400, error: { code: 400, message: 'This action would increase the number of cells in the workbook above the limit of 100 cells.', status: 'INVALID_ARGUMENT' } });
    expect(small.spreadsheets.size).toBe(0);
    const made = await smallApi.spreadsheets.create({ requestBody: { sheets: [{ properties: { title: 'events', gridProperties: { rowCount: 2, columnCount: 6 } } }] } });
    expect(made.data.sheets?.[0]?.properties?.gridProperties).toEqual({ rowCount: 2, columnCount: 6 });
  } finally {
    await small.close();
  }
});

test('unknown spreadsheets, denied credentials, a disabled API and missing auth answer with Google bodies', async () => {
  expect(await failure(api.spreadsheets.get({ spreadsheetId: 'nope' }))).toEqual({ status: 404, error: { code: 404, message: 'Requested entity was not found.', status: 'NOT_FOUND' } });
  const ss = fake.createSpreadsheet();
  fake.denied.add('mallory');
  expect(await raw(`v4/spreadsheets/${ss.id}`, 'mallory')).toEqual({ status: 403, body: { error: { code: 403, message: 'The caller does not have permission', status: 'PERMISSION_DENIED' } } });
  fake.apiDisabled = true;
  const disabled = await failure(api.spreadsheets.get({ spreadsheetId: ss.id }));
  expect(disabled.error).toMatchObject({ code: 403, status: 'PERMISSION_DENIED', details: [{ reason: 'SERVICE_DISABLED' }] });
  const strict = await SheetsFake.start({ requireAuth: true });
  try {
    const res = await fetch(new URL(`v4/spreadsheets/${strict.createSpreadsheet().id}`, strict.url));
    expect(res.status).toBe(401);
  } finally {
    await strict.close();
  }
});

test('per-minute write quotas per credential and per project answer 429 RESOURCE_EXHAUSTED until the next minute', async () => {
  fake.quota.limits = { ...fake.quota.limits, writePerMinutePerUser: 3, writePerMinutePerProject: 5 };
  const ss = fake.createSpreadsheet();
  const write = (token: string) => raw(`v4/spreadsheets/${ss.id}/values/Sheet1!A1?valueInputOption=RAW`, token, { method: 'PUT', body: { values: [[token]] } });
  clock.set(Date.UTC(2026, 10, 22, 12, 0, 5));
  for (let i = 0; i < 3; i++) expect((await write('alice')).status).toBe(200);
  const refused = await write('alice');
  expect(refused.status).toBe(429);
  expect(refused.body).toMatchObject({ error: { code: 429, status: 'RESOURCE_EXHAUSTED', details: [{ reason: 'RATE_LIMIT_EXCEEDED', metadata: { quota_limit: 'WriteRequestsPerMinutePerUser' } }] } });
  expect((refused.body as { error: { message: string } }).error.message).toMatch(/^Quota exceeded for quota metric 'Write requests' and limit 'Write requests per minute per user'/);
  // Reads have their own quota.
  expect((await raw(`v4/spreadsheets/${ss.id}/values/Sheet1!A1`, 'alice')).status).toBe(200);
  for (let i = 0; i < 2; i++) expect((await write('bob')).status).toBe(200);
  expect((await write('carol')).body).toMatchObject({ error: { details: [{ metadata: { quota_limit: 'WriteRequestsPerMinute' } }] } });
  clock.advance(55_000);
  expect((await write('alice')).status).toBe(200);
  expect(fake.quota.peak('alice', 'write')).toBe(3);
});

test('faults: 5xx for the next requests, a hang, and a response lost after the write applied', async () => {
  const ss = fake.createSpreadsheet();
  fake.faults.add({ kind: 'status', status: 503 }, { method: 'values.update', times: 2 });
  const update = () => api.spreadsheets.values.update({ spreadsheetId: ss.id, range: 'Sheet1!A1', valueInputOption: 'RAW', requestBody: { values: [['v']] } });
  expect(await failure(update())).toEqual({ status: 503, error: { code: 503, message: 'The service is currently unavailable.', status: 'UNAVAILABLE' } });
  expect((await failure(update())).status).toBe(503);
  expect(fake.values(ss.id, 'Sheet1')).toEqual([]);
  await update();
  expect(fake.values(ss.id, 'Sheet1')).toEqual([['v']]);

  fake.faults.add({ kind: 'lose-response' }, { method: 'values.append' });
  const lost = await api.spreadsheets.values.append({ spreadsheetId: ss.id, range: 'Sheet1!A:A', valueInputOption: 'RAW', requestBody: { values: [['lost']] } }).catch((err: { response?: unknown; cause?: Error }) => err);
  expect(lost).toMatchObject({ response: undefined, cause: { message: 'fetch failed' } });
  expect(fake.values(ss.id, 'Sheet1')).toEqual([['v'], ['lost']]);

  fake.faults.add({ kind: 'hang' });
  const hung = await api.spreadsheets.get({ spreadsheetId: ss.id }, { timeout: 200 }).catch((err: { response?: unknown; cause?: Error }) => err);
  expect(hung).toMatchObject({ response: undefined, cause: { name: 'TimeoutError' } });
  expect(fake.counts()).toEqual({ 'values.update': 3, 'values.append': 1, 'spreadsheets.get': 1 });
  expect(fake.requests.map((r) => r.status)).toEqual([503, 503, 200, -1, 0]);
});
