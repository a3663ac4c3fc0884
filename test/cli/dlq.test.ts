import type { DeadLetter } from '../../jobs/delivery/dead-letters';
import { deliveryKeys } from '../../jobs/delivery/keys';
import type { TrackedRecord } from '../../src/core/records/types';
import { cliFixture } from './run-cli';
import { eventRecord, seedDeadLetters, seedTracker } from './seed';

const { prefix, redis, store, cli } = cliFixture('cli-dlq');

const user: TrackedRecord = { kind: 'user', id: '0190c000-0000-7000-8000-0000000000aa', receivedAt: '2024-01-01T00:00:00.000Z', uid: 'ada', properties: { plan: 'pro' } };
const session: TrackedRecord = { kind: 'session', id: '0190c000-0000-7000-8000-0000000000bb', receivedAt: '2024-01-01T00:00:00.000Z', sid: 's-1', uid: 'ada', properties: {} };

/** The records queued for delivery again, in stream order. */
async function queued(trackerId: string, destinationId: string): Promise<TrackedRecord[]> {
  const entries = await redis.xrange(deliveryKeys(prefix, { trackerId, destinationId }).stream, '-', '+');
  return entries.map(([, fields]) => JSON.parse(fields[1]!) as TrackedRecord);
}

test('list shows entry, failure time, record and error, oldest first; --limit and --json', async () => {
  await seedTracker(store, 'list', [{ id: 'wh', type: 'local' }]);
  await seedDeadLetters(redis, prefix, 'list', 'wh', [eventRecord(1), user, session]);

  const text = await cli.ok(['dlq', 'list', 'list', 'wh']);
  const lines = text.split('\n');
  expect(lines[0]).toBe('3 dead letters for list/wh:');
  expect(lines[1]).toMatch(/^ENTRY\s+FAILED AT\s+KIND\s+RECORD ID\s+KEY\s+ERROR$/);
  expect(lines[2]).toMatch(/^\d+-0\s+\d{4}-\d\d-\d\dT[\d:.]+Z\s+event\s+0190c000-0000-7000-8000-000000000001\s+_event=purchase _uid=u1\s+permanent 400: row 0190c000-0000-7000-8000-000000000001 rejected: bad value$/);
  expect(lines[3]).toMatch(/\s+user\s+0190c000-0000-7000-8000-0000000000aa\s+_uid=ada\s+permanent 400: /);
  expect(lines[4]).toMatch(/\s+session\s+0190c000-0000-7000-8000-0000000000bb\s+_sid=s-1 _uid=ada\s+permanent 400: /);
  expect(text).toContain('Send them again: tributary dlq replay list wh [--id <entry>...]');

  expect((await cli.ok(['dlq', 'list', 'list', 'wh', '--limit', '2'])).split('\n')[0]).toBe('Showing the oldest 2 of 3 dead letters for list/wh:');
  const entries = JSON.parse(await cli.ok(['dlq', 'list', 'list', 'wh', '--json', '--limit', '2'])) as DeadLetter[];
  expect(entries.map((e) => e.record)).toEqual([eventRecord(1), user]);
  expect(entries[0]).toMatchObject({ entryId: expect.stringMatching(/^\d+-0$/), failedAt: expect.any(String), error: { kind: 'permanent', status: 400 } });
});

test('list of a destination without dead letters says so', async () => {
  await seedTracker(store, 'clean', [{ id: 'wh', type: 'local' }]);
  expect(await cli.ok(['dlq', 'list', 'clean', 'wh'])).toBe('No dead letters for clean/wh.\n');
});

test('replay --id sends only those entries back, and reports ids that were not there', async () => {
  await seedTracker(store, 'pick', [{ id: 'wh', type: 'local' }]);
  const dlq = await seedDeadLetters(redis, prefix, 'pick', 'wh', [eventRecord(1), eventRecord(2), eventRecord(3)]);
  const [first, , third] = await dlq.list();
  expect(await cli.ok(['dlq', 'replay', 'pick', 'wh', '--id', first!.entryId, third!.entryId])).toBe('Replayed 2 dead letters of pick/wh; they are queued for delivery again.\n');
  expect(await queued('pick', 'wh')).toEqual([eventRecord(1), eventRecord(3)]);
  expect((await dlq.list()).map((d) => d.record)).toEqual([eventRecord(2)]);
  expect(await cli.ok(['dlq', 'replay', 'pick', 'wh', '--id', first!.entryId])).toBe('Replayed 0 dead letters of pick/wh (1 of the ids given were not in the store).\n');
});

test('replay without --id sends everything back in order, past one chunk, with the count and no bar off a terminal', async () => {
  await seedTracker(store, 'all', [{ id: 'wh', type: 'local' }]);
  const records = Array.from({ length: 1234 }, (_, i) => eventRecord(i));
  const dlq = await seedDeadLetters(redis, prefix, 'all', 'wh', records);
  expect(await cli.ok(['dlq', 'replay', 'all', 'wh'])).toBe('Replayed 1234 dead letters of all/wh; they are queued for delivery again.\n');
  expect(await dlq.count()).toBe(0);
  expect(await queued('all', 'wh')).toEqual(records);
});

test('replay into a disabled destination says the records wait for it', async () => {
  await seedTracker(store, 'paused', [{ id: 'wh', type: 'local', enabled: false }]);
  await seedDeadLetters(redis, prefix, 'paused', 'wh', [eventRecord(1)]);
  expect(await cli.ok(['dlq', 'replay', 'paused', 'wh'])).toBe(
    'Replayed 1 dead letter of paused/wh; they are queued for delivery again.\nThe destination is disabled: they wait until `tributary destinations enable paused wh`.\n',
  );
});

test('discard drops the chosen entries, then all, without queueing anything', async () => {
  await seedTracker(store, 'drop', [{ id: 'wh', type: 'local' }]);
  const dlq = await seedDeadLetters(redis, prefix, 'drop', 'wh', [eventRecord(1), eventRecord(2), eventRecord(3)]);
  const [first] = await dlq.list();
  expect(await cli.ok(['dlq', 'discard', 'drop', 'wh', '--id', first!.entryId])).toBe('Discarded 1 dead letter of drop/wh.\n');
  expect((await dlq.list()).map((d) => d.record)).toEqual([eventRecord(2), eventRecord(3)]);
  expect(await cli.ok(['dlq', 'discard', 'drop', 'wh'])).toBe('Discarded 2 dead letters of drop/wh.\n');
  expect(await dlq.count()).toBe(0);
  expect(await queued('drop', 'wh')).toEqual([]);
});

test('refusals are one line: unknown tracker or destination, malformed ids and limits', async () => {
  await seedTracker(store, 'dlq-errs', [{ id: 'wh', type: 'local' }]);
  const cases: Array<[string[], string]> = [
    [['dlq', 'list', 'nope', 'wh'], 'No tracker with id nope'],
    [['dlq', 'list', 'dlq-errs', 'whx'], 'Tracker dlq-errs has no destination whx'],
    [['dlq', 'replay', 'dlq-errs', 'whx'], 'Tracker dlq-errs has no destination whx'],
    [['dlq', 'discard', 'dlq-errs', 'wh', '--id', 'last-week'], '"last-week" is not an entry id'],
    [['dlq', 'list', 'dlq-errs', 'wh', '--limit', '0'], 'expected a whole number above 0'],
    [['dlq', 'replay', 'dlq-errs'], "missing required argument 'destination'"],
  ];
  const messages = await Promise.all(cases.map(([args]) => cli.fails(args)));
  cases.forEach(([, expected], i) => expect(messages[i]).toContain(expected));
});
