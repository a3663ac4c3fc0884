import { Redis } from 'ioredis';
import { recentRecordsKey } from '../../jobs/delivery/keys';
import { entryFields } from '../../jobs/routing/stream-entries';
import { stringifyExactJson } from '../../src/core/records/exact-json';
import type { TrackedRecord } from '../../src/core/records/types';
import type { RulesPreview } from '../../src/operator/rules-preview';
import { TrackerStore } from '../../src/core/trackers/store';
import type { Destination } from '../../src/core/trackers/types';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis';
import { cliRunner } from './run-cli';
import { eventRecord, seedTracker } from './seed';

/**
 * Destination rules from the command line: set with `add` and `update`, shown by `show` and
 * `list`, refused before anything is stored when wrong, and previewed on the tracker's last records.
 */
const prefix = uniquePrefix('cli-rules');
const redis = new Redis(TEST_REDIS_URL);
const store = new TrackerStore(redis, prefix);
const cli = cliRunner(prefix);

afterAll(async () => {
  redis.disconnect();
  await deletePrefix(prefix);
  cli.cleanup();
});

const destination = async (trackerId: string, id: string): Promise<Destination> => (await store.get(trackerId))!.destinations.find((d) => d.id === id)!;

test('add stores the rules the flags give; show and list print them', async () => {
  await seedTracker(store, 'shop');
  const added = JSON.parse(
    await cli.ok([
      'destinations', 'add', 'shop', '--type', 'local', '--id', 'marketing',
      '--filter', "_type == 'event' && _event in ['signup', 'order']",
      '--keep', 'total,currency', '--keep', 'utm_*', '--rename', 'total=amount', '--flatten', '--sample', '0.5', '--json',
    ]),
  ) as Destination;
  expect(added.rules).toEqual({ filter: "_type == 'event' && _event in ['signup', 'order']", keep: ['total', 'currency', 'utm_*'], rename: { total: 'amount' }, flatten: true, sample: { rate: 0.5 } });
  expect(await destination('shop', 'marketing')).toEqual(added);

  const shown = await cli.ok(['destinations', 'show', 'shop', 'marketing']);
  expect(shown).toContain("filter   _type == 'event' && _event in ['signup', 'order']");
  expect(shown).toContain('sample   50 % by _uid (else _id)');
  expect(shown).toContain('keep     total, currency, utm_*');
  expect(shown).toContain('rename   total → amount');
  expect(shown).toContain('skipped by its rules: 0 by the filter, 0 by the sample, 0 where the filter failed');
  expect(await cli.ok(['destinations', 'list', 'shop'])).toContain("marketing rules: filter   _type == 'event' && _event in ['signup', 'order']");
});

test('update replaces the rules it names and keeps the others; --clear-rules removes them', async () => {
  await seedTracker(store, 'upd', [{ id: 'sheet', type: 'local', rules: { filter: "_event == 'order'", drop: ['email'] } }]);
  await cli.ok(['destinations', 'update', 'upd', 'sheet', '--filter', "_event == 'signup'", '--rename', 'plan=tier']);
  expect((await destination('upd', 'sheet')).rules).toEqual({ filter: "_event == 'signup'", drop: ['email'], rename: { plan: 'tier' } });
  // keep replaces drop: a destination has one or the other.
  await cli.ok(['destinations', 'update', 'upd', 'sheet', '--keep', 'plan']);
  expect((await destination('upd', 'sheet')).rules).toEqual({ filter: "_event == 'signup'", keep: ['plan'], rename: { plan: 'tier' } });
  await cli.ok(['destinations', 'update', 'upd', 'sheet', '--clear-rules', '--sample', '0.1', '--sample-by', 'account']);
  expect((await destination('upd', 'sheet')).rules).toEqual({ sample: { rate: 0.1, by: 'account' } });
  await cli.ok(['destinations', 'update', 'upd', 'sheet', '--clear-rules']);
  expect((await destination('upd', 'sheet')).rules).toBeUndefined();
  await cli.ok(['destinations', 'update', 'upd', 'sheet', '--setting', 'maxColumns=40']);
  expect((await destination('upd', 'sheet')).settings).toEqual({ maxColumns: 40 });
  expect(await cli.fails(['destinations', 'update', 'upd', 'sheet'])).toContain('nothing to change');
});

test('wrong rules are refused naming the problem and where; the destination is left as it was', async () => {
  await seedTracker(store, 'bad', [{ id: 'sheet', type: 'local', rules: { filter: "_event == 'order'" } }]);
  const cases: Array<[string[], string]> = [
    [['--filter', "_event == 'order' &&"], 'rules.filter: at column 21: Unexpected token'],
    [['--filter', '1 + 2'], 'must be true or false'],
    [['--rename', 'plan=_uid'], 'rules.rename.plan: plan=_uid: _uid is a reserved name'],
    [['--rename', 'a=x', '--rename', 'b=x'], 'rename two properties onto one name'],
    [['--keep', '_event'], '_event is a reserved field'],
    [['--sample', '2'], 'expected a share above 0 and at most 1'],
    [['--rename', 'plan'], 'expected old=new'],
  ];
  const messages = await Promise.all(cases.map(([args]) => cli.fails(['destinations', 'update', 'bad', 'sheet', ...args])));
  cases.forEach(([, expected], i) => expect(messages[i]).toContain(expected));
  expect((await destination('bad', 'sheet')).rules).toEqual({ filter: "_event == 'order'" });
  expect(await cli.fails(['destinations', 'add', 'bad', '--type', 'local', '--id', 'other', '--filter', 'total >'])).toContain('at column 8');
  expect((await store.get('bad'))!.destinations.map((d) => d.id)).toEqual(['sheet']);
});

test('a tab template with an unknown field is refused by the Sheets settings', async () => {
  await seedTracker(store, 'tabs');
  const message = await cli.fails(['destinations', 'add', 'tabs', '--type', 'google-sheets', '--setting', 'spreadsheetId=abcdefghijklmnop', '--setting', 'keyFile=/k.json', '--setting', 'tab={event}']);
  expect(message).toContain('settings.tab: {event} at column 1 is not a field a tab can be named by; use {_event}');
});

test('preview runs saved rules, or the rules the flags would save, over the last records', async () => {
  await seedTracker(store, 'prev', [{ id: 'sheet', type: 'local', rules: { filter: "_event in ['signup', 'order']", keep: ['total'] } }]);
  const records: TrackedRecord[] = [
    eventRecord(1, { event: 'page_view', properties: { total: 0, path: '/' } }),
    eventRecord(2, { event: 'signup', properties: { total: 0, email: 'a@b.c' } }),
    eventRecord(3, { event: 'order', properties: { total: 603851970716743426n, email: 'a@b.c' } }),
    eventRecord(4, { event: 'order', properties: { path: '/checkout' } }),
  ];
  // Two routing steps, as the router keeps them for previews.
  await redis.xadd(recentRecordsKey(prefix, 'prev'), '*', ...entryFields(records.slice(0, 2).map((r) => stringifyExactJson(r))));
  await redis.xadd(recentRecordsKey(prefix, 'prev'), '*', ...entryFields(records.slice(2).map((r) => stringifyExactJson(r))));

  const saved = await cli.ok(['destinations', 'preview', 'prev', 'sheet']);
  expect(saved).toContain("Preview of destination sheet's rules over the last 4 records of tracker prev:");
  expect(saved).toMatch(/filtered\s+event page_view/);
  expect(saved).toContain('{"total":603851970716743426}');
  expect(saved).toContain('3 delivered, 1 filtered out, 0 outside the sample, 0 where the filter failed.');

  const tried = JSON.parse(await cli.ok(['destinations', 'preview', 'prev', 'sheet', '--filter', "_event == 'order' && total > 10", '--limit', '3', '--json'])) as RulesPreview;
  expect(tried.rules).toEqual({ filter: "_event == 'order' && total > 10", keep: ['total'] });
  expect(tried.counts).toEqual({ examined: 3, delivered: 1, filtered: 1, sampled: 0, errors: 1 });
  expect(tried.records.map((r) => r.outcome)).toEqual(['filter', 'deliver', 'error']);
  expect(tried.records[2]).toMatchObject({ outcome: 'error', error: 'Unknown variable: total' });
  // Nothing was saved by trying.
  expect((await destination('prev', 'sheet')).rules).toEqual({ filter: "_event in ['signup', 'order']", keep: ['total'] });
});

test('backfill starts in the workers and returns with --detach; show tells it; --cancel stops it; refusals are one line', async () => {
  await seedTracker(store, 'hist', [{ id: 'bq', type: 'local' }]);
  const started = JSON.parse(await cli.ok(['destinations', 'backfill', 'hist', 'bq', '--since', '2026-11-01', '--until', '2026-11-02T12:00:00Z', '--detach', '--json'])) as { state: string; since: string; until: string; resources: string[] };
  expect(started).toMatchObject({ state: 'running', since: '2026-11-01T00:00:00.000Z', until: '2026-11-02T12:00:00.000Z', resources: ['events', 'users', 'sessions'] });
  expect(await cli.ok(['destinations', 'show', 'hist', 'bq'])).toContain('Backfill of bq (events, users, sessions received 2026-11-01T00:00:00.000Z to 2026-11-02T12:00:00.000Z) under way: 0 archived records read');
  expect(await cli.fails(['destinations', 'backfill', 'hist', 'bq', '--detach'])).toContain('a backfill of bq is under way');
  expect(await cli.ok(['destinations', 'backfill', 'hist', 'bq', '--cancel'])).toContain('Backfill of bq cancelled');
  const narrowed = JSON.parse(await cli.ok(['destinations', 'backfill', 'hist', 'bq', '--resources', 'events', '--since', '2026-11-01', '--detach', '--json'])) as { resources: string[] };
  expect(narrowed.resources).toEqual(['events']);
  await cli.ok(['destinations', 'backfill', 'hist', 'bq', '--cancel']);
  expect(await cli.fails(['destinations', 'backfill', 'hist', 'bq', '--resources', 'users,pets'])).toContain('expected events, users, sessions');
  expect(await cli.fails(['destinations', 'backfill', 'hist', 'bq', '--since', 'yesterday'])).toContain('expected a date or time');
  expect(await cli.fails(['destinations', 'backfill', 'hist', 'ghost'])).toContain('Tracker hist has no destination ghost');
});
