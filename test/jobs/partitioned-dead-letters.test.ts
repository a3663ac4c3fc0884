import { Redis } from 'ioredis';
import { PermanentError } from '../../connectors/errors';
import { DeadLetterStore, isDeadLetterEntryId, PartitionedDeadLetters } from '../../jobs/delivery/dead-letters';
import { partitionDeliveryKeys } from '../../jobs/delivery/keys';
import { Keyspace } from '../../src/core/redis/keyspace';
import type { TrackedRecord } from '../../src/core/records/types';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis';

const prefix = uniquePrefix('pdlq');
const keyspace = new Keyspace(prefix, 4);
const redis = new Redis(TEST_REDIS_URL);
afterAll(async () => {
  await deletePrefix(prefix);
  redis.disconnect();
});

const record = (id: string): TrackedRecord => ({ kind: 'event', id, receivedAt: '2026-01-01T00:00:00.000Z', event: 'e', properties: {} });
const keysOf = (partition: number) => partitionDeliveryKeys(keyspace, { trackerId: 'shop', destinationId: 'bq', partition });

test('the dead letters of 3 partitions read, page, replay and discard as one store', async () => {
  const stores = [0, 1, 2].map((p) => new DeadLetterStore(redis, keysOf(p)));
  // Interleaved in time: r0 (p0), r1 (p2), r2 (p1), r3 (p0), r4 (p2).
  const order: Array<[number, string]> = [[0, 'r0'], [2, 'r1'], [1, 'r2'], [0, 'r3'], [2, 'r4']];
  for (const [p, id] of order) {
    await stores[p]!.add([{ record: record(id), error: new PermanentError('refused') }]);
    await new Promise((r) => setTimeout(r, 2));
  }
  const all = new PartitionedDeadLetters(stores);
  expect(await all.count()).toBe(5);

  const listed = await all.list();
  expect(listed.map((l) => l.record.id)).toEqual(['r0', 'r1', 'r2', 'r3', 'r4']);
  // Ids name their partition past 0, and pass the id check of the CLI and admin API.
  expect(listed.map((l) => l.entryId.replace(/^\d+-\d+/, ''))).toEqual(['', ':p2', ':p1', '', ':p2']);
  for (const l of listed) expect(isDeadLetterEntryId(l.entryId)).toBe(true);

  // Paging from an id returns what follows it in (time, partition) order.
  const page1 = await all.list(2);
  const page2 = await all.list(2, page1.at(-1)!.entryId);
  const page3 = await all.list(2, page2.at(-1)!.entryId);
  expect([...page1, ...page2, ...page3].map((l) => l.record.id)).toEqual(['r0', 'r1', 'r2', 'r3', 'r4']);

  // Replay by id goes back to each record's own partition stream.
  const progress: number[] = [];
  expect(await all.replay([listed[1]!.entryId, listed[3]!.entryId], (done) => progress.push(done))).toBe(2);
  expect(progress.at(-1)).toBe(2);
  expect(await redis.xlen(keysOf(2).stream)).toBe(1);
  expect(await redis.xlen(keysOf(0).stream)).toBe(1);
  expect(await redis.xlen(keysOf(1).stream)).toBe(0);
  expect(Number(await redis.get(keysOf(2).queued))).toBe(1);
  expect((await all.list()).map((l) => l.record.id)).toEqual(['r0', 'r2', 'r4']);

  // Discarding all empties every partition.
  expect(await all.discard()).toBe(3);
  expect(await all.count()).toBe(0);
});
