import type { RedisClient } from '../../src/core/redis/cluster';
import type { TrackedRecord } from '../../src/core/records/types';
import { parseExactJson } from '../../src/core/records/exact-json';
import type { RulesCache } from '../../src/core/rules/compile';
import type { Destination } from '../../src/core/trackers/types';
import { blockArgs, DESTINATION_KEYS, destinationKeys, routedBlocks, SHARE_ARGS, shareArgs, TO_DESTINATIONS, type StepRecords } from './destination-blocks';
import { archiveKeys, backlogIndexKey, backlogMember, deliveryKeys, ENSURE_COUNT, recentRecordsKey, trackerBacklogKey } from '../delivery/keys';
import { entryFields } from './stream-entries';
import { LuaScript } from '../../src/core/redis/lua-script';

/**
 * One job routed alone: a job whose tracker has no destination (its records wait in the tracker's
 * backlog, one record an entry), one whose tracker partition has a backlog to move first, one that
 * nothing waits behind. Jobs routed alone and in runs (jobs/routing/route-run.ts) share the shard's cursor:
 * a job whose id is not above it was routed already (the worker died before BullMQ marked it
 * complete), and nothing is written again.
 */

/**
 * KEYS: cursor, the tracker's backlog, the index of backlogs, its recent records, its archive
 * stream, the job's records key (deleted: the records are in the backlog now). ARGV: job id, the partition's backlog member, whether it keeps an archive ('1' or '0'),
 * the records' blocks (one: the records as accepted, for keepRecent and keepArchive), then the
 * records.
 */
const TO_BACKLOG = new LuaScript(`${ENSURE_COUNT}${TO_DESTINATIONS}
local last = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) <= last then return 0 end
local blocks, records = readBlocks(4)
for j = records, #ARGV do redis.call('XADD', KEYS[2], '*', 'r', ARGV[j]) end
if #ARGV >= records then redis.call('SADD', KEYS[3], ARGV[2]) end
keepRecent(KEYS[4], blocks)
if ARGV[3] == '1' then keepArchive(KEYS[5], blocks) end
redis.call('DEL', KEYS[6])
redis.call('SET', KEYS[1], ARGV[1])
return 1`);

/**
 * Moves the head of a backlog to the destinations, through their rules, without routing the job.
 * KEYS: cursor, the backlog, the index of backlogs, then per destination its stream, record count
 * and status. ARGV: job id, the backlog member, the number of entry ids moved and those ids (the
 * head of the backlog as read), then the blocks and shares (jobs/routing/destination-blocks.ts). 0: the job
 * was routed already; 2: the backlog's head is no longer the one read (read it again); 1: moved.
 */
const MOVE_BACKLOG = new LuaScript(`${ENSURE_COUNT}${TO_DESTINATIONS}
local last = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) <= last then return 0 end
local n = tonumber(ARGV[3])
local head = redis.call('XRANGE', KEYS[2], '-', '+', 'COUNT', 1)
if #head == 0 or head[1][1] ~= ARGV[4] then return 2 end
local blocks, shares = readBlocks(4 + n)
for j = 0, (#KEYS - 3) / ${DESTINATION_KEYS} - 1 do toDestination(4 + ${DESTINATION_KEYS} * j, blocks, shares + ${SHARE_ARGS} * j) end
redis.call('XDEL', KEYS[2], unpack(ARGV, 4, 3 + n))
if redis.call('XLEN', KEYS[2]) == 0 then
  redis.call('DEL', KEYS[2])
  redis.call('SREM', KEYS[3], ARGV[2])
end
return 1`);

/**
 * Routes one job to its destinations once the backlog is empty. KEYS: cursor, the backlog, its
 * recent records, its archive stream, the job's records key (deleted with the routing), then per
 * destination its stream, record count, status and pictures' bucket. ARGV: job id, whether it keeps an archive ('1' or '0'), then the blocks and
 * shares. 0: routed already; 2: the backlog must move first; 1: routed.
 */
const ROUTE_ONE = new LuaScript(`${ENSURE_COUNT}${TO_DESTINATIONS}
local last = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) <= last then return 0 end
if redis.call('XLEN', KEYS[2]) > 0 then return 2 end
local blocks, shares = readBlocks(3)
keepRecent(KEYS[3], blocks)
if ARGV[2] == '1' then keepArchive(KEYS[4], blocks) end
for j = 0, (#KEYS - 5) / ${DESTINATION_KEYS} - 1 do toDestination(6 + ${DESTINATION_KEYS} * j, blocks, shares + ${SHARE_ARGS} * j) end
redis.call('DEL', KEYS[5])
redis.call('SET', KEYS[1], ARGV[1])
return 1`);

/**
 * Discards a job of a removed tracker: its records key deleted and the cursor moved past it, so
 * that it counts as routed. KEYS: cursor, the job's records key. ARGV: job id. 0: routed already.
 */
const DISCARD = new LuaScript(`
local last = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) <= last then return 0 end
redis.call('DEL', KEYS[2])
redis.call('SET', KEYS[1], ARGV[1])
return 1`);

/** Discards the records of a job whose tracker was removed; whether this call did (false: routed before). */
export async function discardJob(opts: Pick<AloneOptions, 'commands' | 'cursorKey'>, job: Pick<AloneJob, 'id' | 'recordsKey'>): Promise<boolean> {
  return (await DISCARD.run(opts.commands, 2, opts.cursorKey, job.recordsKey, job.id)) === 1;
}

export interface AloneJob {
  id: string;
  trackerId: string;
  partition: number;
  destinations: readonly Destination[];
  /** The tracker keeps an archive (jobs/history/archiver.ts). */
  archive: boolean;
  records: StepRecords;
  /** Where the job's records were queued (jobs/routing/ingest-job.ts `queuedRecordsKey`): deleted once routed. */
  recordsKey: string;
}

export interface AloneOptions {
  commands: RedisClient;
  prefix: string;
  cursorKey: string;
  rules: RulesCache;
  /** Backlog entries moved per Redis call, so that no call blocks Redis for long. */
  backlogChunk: number;
}

/** Routes `job` alone; whether this call routed it (false: it had been routed before). */
export async function routeAlone(opts: AloneOptions, job: AloneJob): Promise<boolean> {
  const { commands, prefix, cursorKey } = opts;
  const backlog = trackerBacklogKey(prefix, job.trackerId, job.partition);
  const member = backlogMember({ trackerId: job.trackerId, partition: job.partition });
  const recent = recentRecordsKey(prefix, job.trackerId, job.partition);
  const archive = archiveKeys(prefix, job.trackerId, job.partition).stream;
  const archiving = job.archive ? '1' : '0';
  if (job.destinations.length === 0) {
    const accepted = blockArgs({ blocks: [job.records.lines ?? job.records.texts], shares: [] }, (records) => entryFields(records));
    const answer = await TO_BACKLOG.run(commands, 6, cursorKey, backlog, backlogIndexKey(prefix), recent, archive, job.recordsKey, job.id, member, archiving, ...accepted, ...job.records.texts);
    return answer === 1;
  }
  const at = Date.now();
  const keys = job.destinations.flatMap((d) => destinationKeys(deliveryKeys(prefix, { trackerId: job.trackerId, destinationId: d.id, partition: job.partition }), at));
  const routed = routedBlocks(job.records, job.destinations, opts.rules);
  const args = [...blockArgs(routed, (records) => entryFields(records)), ...shareArgs(routed, at)];
  for (;;) {
    const answer = await ROUTE_ONE.run(commands, 5 + keys.length, cursorKey, backlog, recent, archive, job.recordsKey, ...keys, job.id, archiving, ...args);
    if (answer !== 2) return answer === 1;
    if (!(await moveBacklogChunk(opts, job, backlog, member, keys, at))) return false;
  }
}

/** Moves the next chunk of the backlog; false when the job turns out to be routed already. */
async function moveBacklogChunk(opts: AloneOptions, job: AloneJob, backlog: string, member: string, destinationKeys: string[], at: number): Promise<boolean> {
  const entries = (await opts.commands.xrange(backlog, '-', '+', 'COUNT', opts.backlogChunk)) as Array<[string, string[]]>;
  if (entries.length === 0) return true;
  const texts = entries.map(([, fields]) => fields[1]!);
  const step: StepRecords = { texts, values: () => texts.map((text) => parseExactJson(text) as TrackedRecord) };
  const routed = routedBlocks(step, job.destinations, opts.rules);
  const ids = entries.map(([id]) => id);
  const answer = await MOVE_BACKLOG.run(
    opts.commands,
    3 + destinationKeys.length,
    opts.cursorKey,
    backlog,
    backlogIndexKey(opts.prefix),
    ...destinationKeys,
    job.id,
    member,
    String(ids.length),
    ...ids,
    ...blockArgs(routed, (block) => entryFields(block)),
    ...shareArgs(routed, at),
  );
  return answer !== 0;
}
