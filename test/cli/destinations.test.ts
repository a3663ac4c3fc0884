import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { createDefaultRegistry } from '../../connectors';
import { ConfigurationError, RetryableError } from '../../connectors/errors';
import { DestinationStatusStore } from '../../jobs/delivery/destination-status';
import { deliveryKeys, trackerBacklogKey } from '../../jobs/delivery/keys';
import type { DestinationView } from '../../src/operator/delivery-admin';
import { TrackerStore } from '../../src/core/trackers/store';
import type { Destination } from '../../src/core/trackers/types';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis';
import { cliRunner } from './run-cli';
import { eventRecord, seedDeadLetters, seedTracker } from './seed';

const prefix = uniquePrefix('cli-dest');
const redis = new Redis(TEST_REDIS_URL);
const store = new TrackerStore(redis, prefix);
const cli = cliRunner(prefix);

/** Success paths need a registered connector type; `local` is the first one. */
const withLocal = createDefaultRegistry().get('local') ? test : test.skip;

afterAll(async () => {
  redis.disconnect();
  await deletePrefix(prefix);
  cli.cleanup();
});

const stored = async (trackerId: string): Promise<Destination[]> => (await store.get(trackerId))!.destinations;

withLocal('add stores the destination with parsed settings, and numbers the id when the type is taken', async () => {
  await seedTracker(store, 'shop');
  expect(await cli.ok(['destinations', 'add', 'shop', '--type', 'local'])).toContain('Added destination local (local, default settings) to tracker shop.');
  const out = JSON.parse(await cli.ok(['destinations', 'add', 'shop', '--type', 'local', '--id', 'archive', '--setting', 'path=archive/shop.duckdb', '--setting', 'maxColumns=200', '--json'])) as Destination;
  expect(out).toEqual({ id: 'archive', type: 'local', enabled: true, settings: { path: 'archive/shop.duckdb', maxColumns: 200 } });
  await cli.ok(['destinations', 'add', 'shop', '--type', 'local', '--settings-json', '{"maxColumns":5,"releaseAfterIdleMs":10}', '--setting', 'maxColumns=7', '--disabled']);
  expect(await stored('shop')).toEqual([
    { id: 'local', type: 'local', enabled: true, settings: {} },
    out,
    { id: 'local-2', type: 'local', enabled: false, settings: { maxColumns: 7, releaseAfterIdleMs: 10 } },
  ]);
});

test('a Google Sheet added from its address without a key: the id is stored, and the steps to get a key are printed', async () => {
  await seedTracker(store, 'sheets-cli');
  const id = '1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms';
  const out = await cli.ok(['destinations', 'add', 'sheets-cli', '--type', 'google-sheets', '--setting', `spreadsheetId=https://docs.google.com/spreadsheets/d/${id}/edit#gid=0`]);
  expect((await stored('sheets-cli'))[0]!.settings).toEqual({ spreadsheetId: id });
  expect(out).toContain('No service-account key given');
  expect(out).toContain('https://console.cloud.google.com/apis/library/sheets.googleapis.com');
  expect(out).toContain('tributary destinations update sheets-cli google-sheets --setting keyFile=/path/to/the-key.json');
  expect(out).toContain("Share the spreadsheet with the key's client_email as Editor");
  // With a key file, nothing more to say.
  const keyFile = path.join(cli.dataDir, 'key.json');
  writeFileSync(keyFile, JSON.stringify({ type: 'service_account', client_email: 'a@p.iam.gserviceaccount.com', private_key: 'k' }));
  expect(await cli.ok(['destinations', 'add', 'sheets-cli', '--type', 'google-sheets', '--id', 'keyed', '--setting', `spreadsheetId=${id}`, '--setting', `keyFile=${keyFile}`])).not.toContain('No service-account key given');
});

withLocal('invalid settings are refused naming the setting; nothing is stored', async () => {
  await seedTracker(store, 'strict');
  const cases: Array<[string[], string]> = [
    [['--setting', 'maxColumns=lots'], 'settings.maxColumns'],
    [['--setting', 'path=/etc/shop.duckdb'], 'path must be relative to the data directory'],
    [['--settings-json', '{"colour":"blue"}'], 'colour'],
    [['--id', 'Bad Id'], 'id'],
  ];
  const messages = await Promise.all(cases.map(([args]) => cli.fails(['destinations', 'add', 'strict', '--type', 'local', ...args])));
  cases.forEach(([, expected], i) => expect(messages[i]).toContain(expected));
  expect(await stored('strict')).toEqual([]);
  await cli.ok(['destinations', 'add', 'strict', '--type', 'local', '--id', 'main']);
  expect(await cli.fails(['destinations', 'add', 'strict', '--type', 'local', '--id', 'main'])).toContain('already has a destination main');
});

test('refusals are one line: unknown type, unknown tracker, malformed settings, missing --type', async () => {
  await seedTracker(store, 'errs');
  const cases: Array<[string[], string]> = [
    [['destinations', 'add', 'errs', '--type', 'carrier-pigeon'], 'Unknown destination type "carrier-pigeon"'],
    [['destinations', 'add', 'nope', '--type', 'local'], 'No tracker with id nope'],
    [['destinations', 'add', 'errs', '--type', 'local', '--setting', 'novalue'], 'expected key=value, got "novalue"'],
    [['destinations', 'add', 'errs', '--type', 'local', '--settings-json', '[1]'], 'expected a JSON object'],
    [['destinations', 'add', 'errs', '--type', 'local', '--settings-json', '{oops'], 'not JSON'],
    [['destinations', 'add', 'errs', '--type', 'local', '--setting', 'a=1', '--setting', 'a=2'], '--setting a is given twice'],
    [['destinations', 'add', 'errs'], "required option '--type <type>'"],
    [['destinations', 'list', 'nope'], 'No tracker with id nope'],
    [['destinations', 'remove', 'errs', 'ghost'], 'Tracker errs has no destination ghost'],
    [['destinations', 'enable', 'errs', 'ghost'], 'Tracker errs has no destination ghost'],
    [['destinations', 'test', 'errs', 'ghost'], 'Tracker errs has no destination ghost'],
  ];
  const messages = await Promise.all(cases.map(([args]) => cli.fails(args)));
  cases.forEach(([, expected], i) => expect(messages[i]).toContain(expected));
});

test('list shows each destination with its delivery status', async () => {
  await seedTracker(store, 'status', [
    { id: 'wh', type: 'local' },
    { id: 'sheet', type: 'google-sheets', settings: { spreadsheetId: 'abc' } },
    { id: 'off', type: 'local', enabled: false },
  ]);
  const wh = deliveryKeys(prefix, { trackerId: 'status', destinationId: 'wh' });
  const old = Date.now() - 90_000;
  await redis.xadd(wh.stream, `${old}-0`, 'r', '{}');
  await redis.xadd(wh.stream, `${old + 1}-0`, 'r', '{}');
  await redis.hset(wh.status, { delivered: '7', lastDeliveredAt: '2024-05-01T10:00:00.000Z' });
  await seedDeadLetters(redis, prefix, 'status', 'wh', [eventRecord(1)]);
  const sheet = new DestinationStatusStore(redis, deliveryKeys(prefix, { trackerId: 'status', destinationId: 'sheet' }));
  await sheet.recordError(new ConfigurationError('the service account cannot open spreadsheet abc'), new Date('2024-05-02T00:00:00.000Z'));

  const text = await cli.ok(['destinations', 'list', 'status']);
  const lines = text.split('\n');
  expect(lines[0]).toMatch(/^ID\s+TYPE\s+STATE\s+QUEUED\s+DELIVERED\s+DEAD-LETTERED\s+LAG\s+LAST DELIVERED\s+LAST ERROR$/);
  expect(lines[1]).toMatch(/^wh\s+local\s+enabled\s+2\s+7\s+1\s+1m 3\ds\s+2024-05-01T10:00:00.000Z\s+-$/);
  expect(lines[2]).toMatch(/^sheet\s+google-sheets\s+paused\s+0\s+0\s+0\s+-\s+-\s+2024-05-02T00:00:00.000Z configuration: the service account cannot open spreadsheet abc$/);
  expect(lines[3]).toMatch(/^off\s+local\s+disabled\s+0\s+0\s+0\s+-\s+-\s+-$/);
  expect(text).toContain('sheet is paused until its settings or access are fixed: the service account cannot open spreadsheet abc');
  expect(text).toContain('check: tributary destinations test status sheet');

  const list = JSON.parse(await cli.ok(['destinations', 'list', 'status', '--json'])) as DestinationView[];
  expect(list.map((d) => d.id)).toEqual(['wh', 'sheet', 'off']);
  expect(list[0]!.status).toMatchObject({ queued: 2, delivered: 7, deadLettered: 1, lastError: null, paused: null });
  expect(list[0]!.status.lagMs).toBeGreaterThanOrEqual(90_000);
  expect(list[1]).toMatchObject({ settings: { spreadsheetId: 'abc' }, status: { paused: 'the service account cannot open spreadsheet abc' } });
  await seedTracker(store, 'bare');
  expect(await cli.ok(['destinations', 'list', 'bare'])).toBe('Tracker bare has no destinations. Add one: tributary destinations add bare --type local\n\nArchive: empty so far; it keeps 30 days of accepted records for backfills.\n');
});

test('list says when a destination is retrying a batch, since when, and when it tries next', async () => {
  await seedTracker(store, 'retrying', [{ id: 'bq', type: 'local' }]);
  const status = new DestinationStatusStore(redis, deliveryKeys(prefix, { trackerId: 'retrying', destinationId: 'bq' }));
  await status.startBatch(120, '1-0', new Date('2024-05-03T00:00:00.000Z'));
  await status.recordError(new RetryableError('the write did not finish within 600000 ms; abandoned, to be retried', { reason: 'timeout' }), new Date('2024-05-03T00:10:00.000Z'), { attempts: 2, at: new Date('2024-05-03T00:10:02.000Z') });
  const text = await cli.ok(['destinations', 'list', 'retrying']);
  expect(text).toContain('bq is retrying a batch of 120 records since 2024-05-03T00:00:00.000Z: 2 failed attempts; next attempt at 2024-05-03T00:10:02.000Z');
  const [view] = JSON.parse(await cli.ok(['destinations', 'list', 'retrying', '--json'])) as DestinationView[];
  expect(view!.status).toMatchObject({ inFlight: 120, attempts: 2, writingSince: '2024-05-03T00:00:00.000Z', retryAt: '2024-05-03T00:10:02.000Z', lastError: { kind: 'retryable' } });
});

test('list says how many records wait in the backlog of a tracker without destination', async () => {
  await seedTracker(store, 'waiting');
  for (const n of [1, 2, 3]) await redis.xadd(trackerBacklogKey(prefix, 'waiting'), '*', 'r', JSON.stringify(eventRecord(n)));
  expect(await cli.ok(['destinations', 'list', 'waiting'])).toBe(
    'Tracker waiting has no destinations. Add one: tributary destinations add waiting --type local\n' +
      '3 records accepted while tracker waiting had no destination wait in its backlog; the next destination added receives them.\n\n' +
      'Archive: empty so far; it keeps 30 days of accepted records for backfills.\n',
  );
});

test('disable, enable and remove change the stored destination', async () => {
  await seedTracker(store, 'toggle', [{ id: 'wh', type: 'local' }, { id: 'keep', type: 'local' }]);
  expect(await cli.ok(['destinations', 'disable', 'toggle', 'wh'])).toBe('Destination wh of tracker toggle is disabled.\n');
  expect((await stored('toggle'))[0]).toMatchObject({ id: 'wh', enabled: false });
  expect(await cli.ok(['destinations', 'list', 'toggle'])).toMatch(/^wh\s+local\s+disabled/m);
  expect(await cli.ok(['destinations', 'enable', 'toggle', 'wh'])).toBe('Destination wh of tracker toggle is enabled.\n');
  expect((await stored('toggle'))[0]).toMatchObject({ id: 'wh', enabled: true });
  expect(await cli.ok(['destinations', 'remove', 'toggle', 'wh'])).toBe('Removed destination wh from tracker toggle.\n');
  expect((await stored('toggle')).map((d) => d.id)).toEqual(['keep']);
  expect(await cli.fails(['destinations', 'remove', 'toggle', 'wh'])).toContain('Tracker toggle has no destination wh');
});

test('test reports what is wrong on stdout and exits 1', async () => {
  await seedTracker(store, 'probe', [{ id: 'odd', type: 'carrier-pigeon' }]);
  const r = await cli.run(['destinations', 'test', 'probe', 'odd']);
  expect(r).toEqual({ code: 1, stderr: '', stdout: 'NOT OK: destination odd of tracker probe: Unknown destination type "carrier-pigeon". (configuration error)\n' });
  const json = await cli.run(['destinations', 'test', 'probe', 'odd', '--json']);
  expect(json.code).toBe(1);
  expect(JSON.parse(json.stdout)).toEqual({ ok: false, error: { kind: 'configuration', message: 'Unknown destination type "carrier-pigeon".' } });
});

withLocal('test on a local destination: OK creates the warehouse; a path through a file is NOT OK', async () => {
  await seedTracker(store, 'probe-local', [{ id: 'wh', type: 'local' }, { id: 'blocked', type: 'local', settings: { path: 'blocker/w.duckdb' } }]);
  expect(await cli.ok(['destinations', 'test', 'probe-local', 'wh'])).toBe('OK: destination wh of tracker probe-local works.\n');
  expect(existsSync(path.join(cli.dataDir, 'warehouse', 'probe-local.duckdb'))).toBe(true);

  writeFileSync(path.join(cli.dataDir, 'blocker'), 'not a directory');
  const r = await cli.run(['destinations', 'test', 'probe-local', 'blocked']);
  expect(r.code).toBe(1);
  expect(r.stderr).toBe('');
  expect(r.stdout).toMatch(/^NOT OK: destination blocked of tracker probe-local: .*blocker.*not writable.*\(configuration error\)\n$/);
});
