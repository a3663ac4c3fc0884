import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { ArchiveFiles } from '../../jobs/history/archive-files';
import { appendMergedStates, appendStates } from '../../jobs/history/backfill-upserts';
import { archiveKeys, deliveryKeys } from '../../jobs/delivery/keys';
import { readWholeEntries } from '../../jobs/delivery/stream-read';
import { entryFields } from '../../jobs/routing/stream-entries';
import { parseExactJson } from '../../src/core/records/exact-json';
import type { TrackedRecord } from '../../src/core/records/types';
import { RulesCache } from '../../src/core/rules/compile';
import type { Destination } from '../../src/core/trackers/types';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis';

/**
 * Users and sessions of a backfill as merged states: folded from the archive files and the part of
 * the archive stream not on disk yet, appended to the destination's live stream only while nothing
 * was routed since the fold read the stream's end.
 */
const prefix = uniquePrefix('upserts');
const redis = new Redis(TEST_REDIS_URL);
const dir = mkdtempSync(path.join(tmpdir(), 'tributary-upserts-'));
const archive = archiveKeys(prefix, 't');
const keys = deliveryKeys(prefix, { trackerId: 't', destinationId: 'd' });
const destination = { id: 'd', type: 'local', enabled: true, settings: {}, rules: { drop: ['secret'] } } as unknown as Destination;
let files: ArchiveFiles;

afterAll(async () => {
  await files?.close();
  await deletePrefix(prefix);
  redis.disconnect();
  rmSync(dir, { recursive: true, force: true });
});

const user = (id: string, at: string, properties: Record<string, unknown>, uid = 'u1'): TrackedRecord => ({ kind: 'user', id, receivedAt: at, uid, properties: properties as TrackedRecord['properties'] });

test('folded from the files and the stream, through the rules, null kept, events and updates before --since left out; then refused once routing went on', async () => {
  const t0 = Date.now() - 60_000;
  const iso = (ms: number) => new Date(ms).toISOString();
  files = await ArchiveFiles.open(dir, null);
  const onDisk = [
    user('a', iso(t0 - 120_000), { plan: 'ancient', old: true }),
    user('b', iso(t0 + 1000), { plan: 'free', coupon: 'X', secret: 's' }),
    { kind: 'event', id: 'e', receivedAt: iso(t0 + 1500), event: 'view', eventAt: iso(t0 + 1500), properties: {} } as TrackedRecord,
    { kind: 'session', id: 'c', receivedAt: iso(t0 + 2000), sid: 's1', uid: 'u1', properties: { landing: '/a' } } as TrackedRecord,
  ];
  await files.append([{ lines: onDisk.map((r, i) => ({ id: `${t0 - 200_000 + i * 1000}-0`, json: JSON.stringify(r) })) }]);
  await redis.set(archive.archived, `${t0 - 200_000 + 3000}-0`);
  // Not on disk yet: in the archive stream, as routing left it.
  // An integer beyond 2^53 as the router keeps it: a bare number with all its digits.
  const exact = JSON.stringify(user('d', iso(t0 + 3000), { plan: 'pro', coupon: null, n: 0 })).replace('"n":0', '"n":603851970716743426');
  await redis.xadd(archive.stream, '*', ...(entryFields([exact]) as string[]));
  await redis.hset(keys.backfill, 'id', 'b1', 'state', 'running');

  const states = await appendMergedStates(redis, files, archive, destination, keys, new RulesCache(), { backfillId: 'b1', since: t0, kinds: new Set(['user', 'session']) }, '0-0');
  expect(states).toBe(2);
  const sent = (await readWholeEntries(redis, keys.stream, '0-0', 100)).map((e) => parseExactJson(e.json) as TrackedRecord);
  expect(sent).toEqual([
    expect.objectContaining({ kind: 'user', id: 'd', uid: 'u1', properties: { plan: 'pro', coupon: null, n: 603851970716743426n } }),
    expect.objectContaining({ kind: 'session', id: 'c', sid: 's1', properties: { landing: '/a' } }),
  ]);
  expect(await redis.hget(keys.backfill, 'upserts')).toBe('2');
  expect(await redis.hget(keys.backfill, 'upsertsDone')).toBe('1');

  // A routing step after the end the fold read: nothing is appended, the fold must read it first.
  const read = String(((await redis.call('XINFO', 'STREAM', archive.stream)) as unknown[])[((await redis.call('XINFO', 'STREAM', archive.stream)) as unknown[]).indexOf('last-generated-id') + 1]);
  await redis.xadd(archive.stream, '*', ...(entryFields([JSON.stringify(user('f', iso(t0 + 4000), { plan: 'team' }))]) as string[]));
  const before = await redis.xlen(keys.stream);
  expect(await appendStates(redis, archive, destination, keys, new RulesCache(), { backfillId: 'b1', since: t0, kinds: new Set(['user']) }, read, [user('x', iso(t0), { plan: 'stale' })])).toBe(0);
  expect(await redis.xlen(keys.stream)).toBe(before);
  // Another backfill by now: refused too.
  expect(await appendStates(redis, archive, destination, keys, new RulesCache(), { backfillId: 'other', since: t0, kinds: new Set(['user']) }, read, [])).toBe(-1);
});
