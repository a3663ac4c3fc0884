import { requestHistoryKey, unknownTokenKey, type RequestEntry, type RequestPage } from '../../src/core/requests/request-history';
import { cliFixture } from './run-cli';
import { seedTracker } from './seed';

const { prefix, redis, store, cli } = cliFixture('cli-req');

const base = { method: 'POST', endpoint: '/v3/event', path: '/v3/event', bytes: 40, ip: '203.0.113.7' };
const accepted: RequestEntry = { ...base, at: '2026-11-25T10:00:00.000Z', status: 202, records: 1, userAgent: 'curl/8.5.0' };
const refused: RequestEntry = { ...base, at: '2026-11-25T10:00:01.000Z', status: 400, records: 0, code: 'ERR_MISSING_FIELD', message: 'An event needs _event.', userAgent: 'Mozilla/5.0' };
const unknown: RequestEntry = { ...base, at: '2026-11-25T10:00:02.000Z', status: 401, records: 0, code: 'ERR_INVALID_TOKEN', message: 'The tracker token is unknown or revoked.', tokenHint: 'trk_AbCd…', suppressed: 12 };

beforeAll(async () => {
  await seedTracker(store, 'shop');
  await seedTracker(store, 'quiet');
  // The recorder pushes newest last: LPUSH keeps the list newest first.
  await redis.lpush(requestHistoryKey(prefix, 'shop'), JSON.stringify(accepted), JSON.stringify(refused));
  await redis.lpush(unknownTokenKey(prefix), JSON.stringify(unknown));
});

test('requests <tracker> lists the kept requests newest first, with their outcome', async () => {
  const out = await cli.ok(['requests', 'shop']);
  const lines = out.trim().split('\n');
  expect(lines[0]).toMatch(/^TIME\s+STATUS\s+METHOD\s+PATH\s+BYTES\s+OUTCOME\s+IP\s+USER AGENT\s+MESSAGE$/);
  expect(lines[1]).toMatch(/^2026-11-25T10:00:01.000Z\s+400\s+POST\s+\/v3\/event\s+40\s+ERR_MISSING_FIELD\s+203\.0\.113\.7\s+Mozilla\/5\.0\s+An event needs _event\.$/);
  expect(lines[2]).toMatch(/^2026-11-25T10:00:00.000Z\s+202\s+.*1 stored\s+203\.0\.113\.7\s+curl\/8\.5\.0/);
  expect(out).toContain('2 requests kept for tracker shop, newest first.');
});

test('--status, --code, --text and --limit filter; --json prints the page', async () => {
  const page = (args: string[]) => cli.ok(['requests', 'shop', ...args, '--json']).then((o) => JSON.parse(o) as RequestPage);
  expect((await page(['--status', 'refused'])).entries).toEqual([refused]);
  expect((await page(['--status', '2xx'])).entries).toEqual([accepted]);
  expect((await page(['--code', 'err_missing_field'])).entries).toEqual([refused]);
  expect(await page(['--text', 'CURL'])).toEqual({ total: 2, matched: 1, entries: [accepted] });
  expect((await page(['--limit', '1'])).entries).toEqual([refused]);
  expect(await cli.ok(['requests', 'shop', '--status', '500'])).toBe('None of the 2 requests kept for tracker shop match.\n');
  expect(await cli.ok(['requests', 'quiet'])).toBe('No requests kept for tracker quiet yet.\n');
});

test('--unknown-token lists the relay-wide list with the token hint and what was not kept', async () => {
  const out = await cli.ok(['requests', '--unknown-token']);
  expect(out).toMatch(/TOKEN/);
  expect(out).toMatch(/ERR_INVALID_TOKEN\s+trk_AbCd…\s+203\.0\.113\.7/);
  expect(out).toContain('(12 more not kept before this one)');
});

test('refusals name what to fix', async () => {
  expect(await cli.fails(['requests'])).toMatch(/name a tracker, or pass --unknown-token/);
  expect(await cli.fails(['requests', 'shop', '--unknown-token'])).toMatch(/not both/);
  expect(await cli.fails(['requests', 'nope'])).toMatch(/nope/);
  expect(await cli.fails(['requests', 'shop', '--status', 'teapot'])).toMatch(/a status \(401\), a class \(4xx\), accepted or refused/);
  expect(await cli.fails(['requests', 'shop', '--code', 'nonsense'])).toMatch(/an error code/);
});
