import { ConfigurationError, PermanentError, RetryableError } from '../../../connectors/errors';
import { GoogleSheetsSettingsSchema } from '../../../connectors/google-sheets';
import { columnLetters, rowsRange } from '../../../connectors/google-sheets/a1';
import { resolveAuth } from '../../../connectors/google-sheets/auth';
import { RequestBudget } from '../../../connectors/google-sheets/budget';
import { resolveSettings } from '../../../connectors/google-sheets/config';
import { toConnectorError } from '../../../connectors/google-sheets/google-errors';
import { evolveHeader } from '../../../connectors/google-sheets/header';
import { eventsTabFor } from '../../../connectors/google-sheets/partition';
import { chunkRows } from '../../../connectors/google-sheets/rows';
import { cellValue, fitCell, TRUNCATION_MARKER } from '../../../connectors/google-sheets/values';

test('cell values: types kept, JSON for objects, text cut at 50 000 characters with a marker', () => {
  expect([cellValue(3), cellValue(1.5), cellValue(false), cellValue('=1+1'), cellValue(null)]).toEqual([3, 1.5, false, '=1+1', null]);
  expect(cellValue({ a: [1, { b: null }] })).toBe('{"a":[1,{"b":null}]}');
  expect(fitCell('x'.repeat(50_000))).toBe('x'.repeat(50_000));
  const cut = fitCell('x'.repeat(50_001));
  expect(cut).toHaveLength(50_000);
  expect(cut.endsWith(TRUNCATION_MARKER)).toBe(true);
  // Never half of a surrogate pair before the marker.
  const emoji = fitCell('x' + '😀'.repeat(30_000));
  expect(emoji.length).toBeLessThanOrEqual(50_000);
  expect(emoji.slice(0, -TRUNCATION_MARKER.length)).toMatch(/^x(😀)+$/u);
});

test('header evolution keeps existing columns in place and adds new names at the right', () => {
  expect(evolveHeader(['plan', '', '_id', 'mine'], ['_id', '_uid', 'plan', 'seats', '_uid'])).toEqual({ header: ['plan', '', '_id', 'mine', '_uid', 'seats'], added: { from: 5, names: ['_uid', 'seats'] } });
  expect(evolveHeader(['_id'], ['_id']).added).toBeUndefined();
});

test('A1 helpers quote every tab name', () => {
  expect(columnLetters(1)).toBe('A');
  expect(columnLetters(28)).toBe('AB');
  expect(columnLetters(703)).toBe('AAA');
  expect(rowsRange("Jon's events", 42, 51, 28)).toBe("'Jon''s events'!A42:AB51");
});

test('monthly tabs follow the UTC month of _received_at', () => {
  const s = { tabs: { users: 'users', sessions: 'sessions', events: 'events' }, rollover: 'monthly' as const, tabTemplate: undefined };
  expect(eventsTabFor('2026-11-30T23:59:59.999Z', s)).toBe('events_2026_11');
  expect(eventsTabFor('2026-12-01T00:00:00.000Z', s)).toBe('events_2026_12');
  expect(eventsTabFor('2026-12-01T00:00:00.000Z', { ...s, rollover: 'none' })).toBe('events');
});

test('a tab template names events tabs by _event, cleaned for Sheets, never as the users or sessions tab', () => {
  const s = { tabs: { users: 'users', sessions: 'sessions', events: 'events' }, rollover: 'monthly' as const, tabTemplate: '{_event}' };
  expect(eventsTabFor('2026-11-30T23:59:59.999Z', s, 'signup')).toBe('signup_2026_11');
  expect(eventsTabFor('2026-11-30T23:59:59.999Z', { ...s, rollover: 'none' }, 'order')).toBe('order');
  expect(eventsTabFor('2026-11-30T23:59:59.999Z', { ...s, rollover: 'none', tabTemplate: 'events {_event}' }, 'page\nview\t ')).toBe('events page view');
  expect(eventsTabFor('2026-11-30T23:59:59.999Z', { ...s, rollover: 'none' }, 'Users')).toBe('Users (events)');
  expect(eventsTabFor('2026-11-30T23:59:59.999Z', s, 'x'.repeat(300))).toBe(`${'x'.repeat(90)}_2026_11`);
  // Cut between the halves of a surrogate pair, a name keeps neither.
  expect(eventsTabFor('2026-11-30T23:59:59.999Z', { ...s, rollover: 'none' }, `${'x'.repeat(89)}😀`)).toBe('x'.repeat(89));
});

test.each([
  ['{event}', /\{event\} at column 1 is not a field a tab can be named by; use \{_event\}/],
  ['events {_event', /an unmatched \{ at column 8/],
  ['events', /names at least one field/],
])('the tab template %p is refused', (tab, message) => {
  const parsed = GoogleSheetsSettingsSchema.safeParse({ spreadsheetId: 'abcdefghijklmnop', keyFile: '/k.json', tab });
  expect(parsed.success).toBe(false);
  expect(parsed.error?.issues.map((i) => i.message).join('; ')).toMatch(message);
});

test('appends are split only past 2 MB', () => {
  const rows = Array.from({ length: 5 }, () => ['x'.repeat(600_000)]);
  expect(chunkRows(rows).map((c) => [c.offset, c.rows.length])).toEqual([[0, 3], [3, 2]]);
  expect(chunkRows([['a'], ['b']])).toHaveLength(1);
});

test('the budget allows `limit` requests in any 60 s and honours a block after a 429', () => {
  const b = new RequestBudget(2);
  expect(b.delay(0)).toBe(0);
  b.take(0);
  b.take(10_000);
  expect(b.delay(30_000)).toBe(30_000);
  expect(b.delay(59_999)).toBe(1);
  expect(b.delay(60_000)).toBe(0);
  b.take(60_000);
  b.block(100_000);
  expect(b.delay(75_000)).toBe(25_000);
  expect(b.used(75_000)).toBe(1);
});

const ctx = { spreadsheetId: 'abc', identity: 'svc@p.iam.gserviceaccount.com', now: Date.UTC(2026, 10, 22, 12, 0, 30) };
const http = (status: number, data: unknown) => Object.assign(new Error('Request failed'), { response: { status, data, headers: new Headers() } });
const google = (code: number, status: string, message: string, reason?: string) => http(code, { error: { code, status, message, ...(reason ? { details: [{ reason }] } : {}) } });

test('Google errors map to the error type that decides what delivery does', () => {
  const quota = toConnectorError(google(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded'), ctx);
  expect(quota).toBeInstanceOf(RetryableError);
  expect((quota as RetryableError).retryAfterMs).toBe(31_000);
  // Each refusal a person must act on says the next step.
  expect(toConnectorError(google(403, 'PERMISSION_DENIED', 'The caller does not have permission'), ctx).message).toBe(
    'spreadsheet abc is not shared with svc@p.iam.gserviceaccount.com: open it, click Share, paste svc@p.iam.gserviceaccount.com, choose Editor, and send. Google said: The caller does not have permission',
  );
  const disabled = toConnectorError(
    http(403, {
      error: {
        code: 403,
        status: 'PERMISSION_DENIED',
        message: 'Google Sheets API has not been used in project 123 before or it is disabled.',
        details: [{ reason: 'SERVICE_DISABLED', metadata: { consumer: 'projects/123', service: 'sheets.googleapis.com' } }],
      },
    }),
    ctx,
  );
  expect(disabled.details.reason).toBe('SERVICE_DISABLED');
  expect(disabled.message).toMatch(/^The Google Sheets API is not enabled in project 123: enable it at https:\/\/console\.cloud\.google\.com\/apis\/library\/sheets\.googleapis\.com\?project=123 \(Enable\), wait a minute, then test again\./);
  const missing = toConnectorError(google(404, 'NOT_FOUND', 'Requested entity was not found.'), ctx);
  expect(missing).toBeInstanceOf(ConfigurationError);
  expect(missing.message).toMatch(/^No such spreadsheet: abc was not found\. Check the address: open the spreadsheet and copy its URL/);
  const deleted = 'Google refused the key of svc@p.iam.gserviceaccount.com: it was deleted or disabled, or its service account was. Create a new JSON key';
  expect(toConnectorError(http(400, { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' }), ctx).message).toMatch(new RegExp(`^${deleted}.*Google said: invalid_grant Invalid JWT Signature\\.$`));
  expect(toConnectorError(google(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials.'), ctx).message.startsWith(deleted)).toBe(true);
  expect(toConnectorError(google(400, 'INVALID_ARGUMENT', "Range ('users'!D1) exceeds grid limits. Max rows: 2, max columns: 3"), ctx).details.reason).toBe('layout-changed');
  expect(toConnectorError(google(400, 'INVALID_ARGUMENT', 'Invalid values[0][0]'), ctx)).toBeInstanceOf(PermanentError);
  expect(toConnectorError(google(400, 'INVALID_ARGUMENT', 'This action would increase the number of cells in the workbook above the limit of 10000000 cells.'), ctx)).toBeInstanceOf(ConfigurationError);
  expect(toConnectorError(google(503, 'UNAVAILABLE', 'The service is currently unavailable.'), ctx)).toBeInstanceOf(RetryableError);
  const lost = toConnectorError(Object.assign(new Error('Unexpected Gaxios Error'), { cause: new TypeError('fetch failed', { cause: new Error('other side closed') }) }), ctx);
  expect(lost).toMatchObject({ kind: 'retryable', message: 'no answer from the Sheets API: TypeError: fetch failed ← Error: other side closed' });
  expect(toConnectorError(new Error('Could not load the default credentials.'), ctx)).toBeInstanceOf(ConfigurationError);
});

test('settings: a spreadsheet id or createSpreadsheet, one kind of credentials, distinct tabs', () => {
  const parse = (s: unknown) => GoogleSheetsSettingsSchema.safeParse(s);
  expect(parse({ spreadsheetId: '1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms' }).success).toBe(true);
  expect(parse({ createSpreadsheet: true, endpoint: 'http://127.0.0.1:8085/' }).success).toBe(true);
  expect(parse({}).error?.issues[0]?.message).toBe('set either spreadsheetId or createSpreadsheet: true (not both)');
  expect(parse({ spreadsheetId: 'https://docs.google.com/x' }).error?.issues[0]?.message).toMatch(/^not the address of a spreadsheet: open the spreadsheet and copy the address/);
  // The address as the browser shows it is the id, whatever follows it.
  const url = 'https://docs.google.com/spreadsheets/d/1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms/edit#gid=0';
  expect(parse({ spreadsheetId: url }).data?.spreadsheetId).toBe('1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms');
  expect(parse({ spreadsheetId: ` ${url.replace('/edit#gid=0', '/edit?usp=sharing')} ` }).data?.spreadsheetId).toBe('1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms');
  expect(parse({ spreadsheetId: url.replace('/spreadsheets/d/', '/spreadsheets/u/1/d/') }).data?.spreadsheetId).toBe('1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms');
  expect(parse({ spreadsheetId: 'https://docs.google.com/spreadsheets/d/e/2PACX-1vRabcdefghijklmnop/pubhtml' }).error?.issues[0]?.message).toMatch(/^this is a link published to the web/);
  expect(parse({ spreadsheetId: 'abc' }).error?.issues[0]?.message).toMatch(/^a spreadsheet's id is the part of its address between \/d\/ and \/edit/);
  expect(parse({ createSpreadsheet: true, keyFile: '/k.json', credentials: { type: 'service_account', client_email: 'a@b.co', private_key: 'k' } }).success).toBe(false);
  expect(parse({ createSpreadsheet: true, tabs: { users: 'Data', events: 'data' } }).success).toBe(false);
  expect(parse({ createSpreadsheet: true, writeRequestsPerMinute: 301 }).success).toBe(false);
  expect(parse({ createSpreadsheet: true, extra: 1 }).success).toBe(false);
  const id = '1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms';
  const next = '1CyjNWt1YSB6oGNeLwCeCZkhnVVqqumct85PhF3vqnt';
  expect(parse({ spreadsheetId: id, nextSpreadsheetIds: [next], whenFull: 'pause' }).success).toBe(true);
  expect(parse({ spreadsheetId: id, nextSpreadsheetIds: [next, next] }).error?.issues[0]?.message).toBe('list each spreadsheet once, and not spreadsheetId itself');
  expect(parse({ spreadsheetId: id, nextSpreadsheetIds: [id] }).success).toBe(false);
  expect(parse({ spreadsheetId: id, whenFull: 'archive' }).success).toBe(false);
  expect(resolveSettings(parse({ spreadsheetId: id }).data!)).toMatchObject({ whenFull: 'new-spreadsheet', nextSpreadsheetIds: [], maxCells: 9_500_000 });
});

test('credentials: inline key, key file, none with an endpoint, else Application Default Credentials', () => {
  const key = { type: 'service_account' as const, client_email: 'svc@p.iam.gserviceaccount.com', private_key: '-----BEGIN PRIVATE KEY-----\n...' };
  expect(resolveAuth({ createSpreadsheet: true, credentials: key }).identity).toBe('svc@p.iam.gserviceaccount.com');
  expect(resolveAuth({ createSpreadsheet: true, keyFile: '/etc/key.json' })).toMatchObject({ identity: 'key file /etc/key.json' }); // unreadable: named by its path
  expect(resolveAuth({ createSpreadsheet: true, endpoint: 'http://127.0.0.1:1/' })).toEqual({ client: undefined, identity: 'anonymous at http://127.0.0.1:1/' });
  expect(resolveAuth({ createSpreadsheet: true }).client).toBeDefined();
});
