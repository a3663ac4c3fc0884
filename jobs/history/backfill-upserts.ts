import type { RedisClient } from '../../src/core/redis/cluster';
import { holdsBigInt, parseExactJson, stringifyExactJson } from '../../src/core/records/exact-json';
import type { JsonValue, RecordKind, TrackedRecord } from '../../src/core/records/types';
import type { RulesCache } from '../../src/core/rules/compile';
import type { Destination } from '../../src/core/trackers/types';
import type { ArchiveFiles } from './archive-files';
import { blockArgs, DESTINATION_KEYS, destinationKeys, routedBlocks, SHARE_ARGS, shareArgs, TO_DESTINATIONS } from '../routing/destination-blocks';
import type { FramedEntry } from '../spill/frames';
import { compareStreamIds, ENSURE_COUNT, entryIdOf, type ArchiveKeys, type DeliveryKeys } from '../delivery/keys';
import { entryFields } from '../routing/stream-entries';
import { readWholeEntries } from '../delivery/stream-read';
import { LuaScript } from '../../src/core/redis/lua-script';

/**
 * Users and sessions in a backfill: each key's merged state, folded from every update archived
 * since the range's start, reaches the destination in order with its live updates. The fold takes
 * the archive files, then what the archive stream holds that is not on disk yet; the states are
 * appended to the destination's *live* stream in one atomic step that first checks that nothing was
 * routed since the fold read the stream's end (the router appends to the archive stream and to the
 * destination streams in one script). So every update routed before is in the fold (the destination
 * gets it again, merged: the same state), and every update routed after follows the merged states
 * in the stream: the destination ends with each key as it is, never an older value over a newer.
 * When routing went on meanwhile, the fold reads the stream's new end and tries again.
 */

/** States appended per Redis call: one block each, a bounded script. */
const STATES_PER_CALL = 2000;
/** Tries to find the archive stream unchanged before giving up for this round (the next round starts over). */
const TRIES = 20;

/**
 * Appends merged states to a destination's live stream if the archive stream's last id is still the
 * one read (so nothing was routed since), and marks them queued in the backfill. KEYS: archive
 * stream, backfill hash, then the destination's stream, count, status and pictures' bucket. ARGV:
 * the last id read ('' for none), the backfill id, 'final' or 'part', the states in this call,
 * then the blocks and shares. 1: appended; 0: routing went on (nothing appended); -1: the backfill
 * changed.
 */
const APPEND_STATES = new LuaScript(`${ENSURE_COUNT}${TO_DESTINATIONS}
if redis.call('HGET', KEYS[2], 'id') ~= ARGV[2] or redis.call('HGET', KEYS[2], 'state') ~= 'running' then return -1 end
local last = ''
if redis.call('EXISTS', KEYS[1]) == 1 then
  local info = redis.call('XINFO', 'STREAM', KEYS[1])
  for i = 1, #info, 2 do if info[i] == 'last-generated-id' then last = info[i + 1] end end
end
if last ~= ARGV[1] then return 0 end
local blocks, shares = readBlocks(5)
toDestination(3, blocks, shares)
redis.call('HINCRBY', KEYS[2], 'upserts', ARGV[4])
if ARGV[3] == 'final' then redis.call('HSET', KEYS[2], 'upsertsDone', '1') end
return 1`);

/** A key's state as the fold has it. */
interface State {
  record: TrackedRecord;
}

function keyOf(record: TrackedRecord): string | undefined {
  return record.kind === 'user' ? record.uid : record.kind === 'session' ? record.sid : undefined;
}

/** Folds one update into its key's state: later values win, `null` stays (it clears the cell), the last `_id` and time are the state's. */
function fold(states: Map<string, State>, record: TrackedRecord): void {
  const key = `${record.kind}\u0000${keyOf(record)}`;
  const state = states.get(key);
  if (!state) {
    states.set(key, { record: { ...record, properties: { ...record.properties } } });
    return;
  }
  const merged = state.record;
  for (const [name, value] of Object.entries(record.properties)) (merged.properties as Record<string, JsonValue>)[name] = value as JsonValue;
  merged.id = record.id;
  merged.receivedAt = record.receivedAt;
  if (record.uid !== undefined) merged.uid = record.uid;
  if (record.context !== undefined) merged.context = record.context;
}

export interface UpsertBackfill {
  backfillId: string;
  /** `_received_at` from which updates are folded (ms); users and sessions are sent as they are now. */
  since: number;
  kinds: ReadonlySet<RecordKind>;
}

/**
 * Folds and appends the merged states of one destination partition's backfill. Returns the states
 * appended, or undefined when routing never paused long enough this round (it is tried again) or
 * the backfill changed.
 */
export async function appendMergedStates(
  redis: RedisClient,
  files: ArchiveFiles,
  archive: ArchiveKeys,
  destination: Destination,
  keys: DeliveryKeys,
  rules: RulesCache,
  job: UpsertBackfill,
  readFrom: string,
): Promise<number | undefined> {
  const states = new Map<string, State>();
  const take = (entries: readonly FramedEntry[]) => {
    for (const entry of entries) {
      // Cheap test before parsing: events are most of an archive.
      if (!/^\{"kind":"(user|session)"/.test(entry.json)) continue;
      const record = parseExactJson(entry.json) as TrackedRecord;
      if (!job.kinds.has(record.kind) || keyOf(record) === undefined || Date.parse(record.receivedAt) < job.since) continue;
      fold(states, record);
    }
  };
  // Run by the archiver between its rounds: the files hold everything up to `archived`, the stream
  // everything after it, and nothing moves from one to the other meanwhile.
  for await (const frame of files.read(readFrom)) take(frame);
  let cursor = (await redis.get(archive.archived)) ?? '0-0';
  for (let attempt = 0; attempt < TRIES; attempt++) {
    // The end of the archive stream as it is now; what it holds up to there is folded.
    const last = await lastGeneratedId(redis, archive.stream);
    if (last !== '' && compareStreamIds(last, cursor) > 0) {
      const tail = await readWholeEntries(redis, archive.stream, cursor, Number.MAX_SAFE_INTEGER);
      take(tail.filter((e) => compareStreamIds(entryIdOf(e.id), last) <= 0));
      cursor = last;
    }
    const appended = await appendStates(redis, archive, destination, keys, rules, job, last, [...states.values()].map((s) => s.record));
    if (appended !== 0) return appended === -1 ? undefined : states.size;
  }
  return undefined;
}

async function lastGeneratedId(redis: RedisClient, stream: string): Promise<string> {
  if ((await redis.exists(stream)) === 0) return '';
  const info = (await redis.call('XINFO', 'STREAM', stream)) as unknown[];
  for (let i = 0; i + 1 < info.length; i += 2) if (String(info[i]) === 'last-generated-id') return String(info[i + 1]);
  return '';
}

/**
 * The states in calls of STATES_PER_CALL; every call checks the archive stream's end, so that a
 * routing step between two calls is caught. 1: all appended; 0: routing went on before the first
 * (try again); -1: the backfill changed. Routing between two calls leaves the first calls' states
 * in the stream, before that step's updates: still in order, since the fold held every update
 * routed before them; the rest are folded again and appended after.
 */
export async function appendStates(redis: RedisClient, archive: ArchiveKeys, destination: Destination, keys: DeliveryKeys, rules: RulesCache, job: UpsertBackfill, last: string, records: TrackedRecord[]): Promise<number> {
  const texts = records.map((r) => (holdsBigInt(r.properties) ? stringifyExactJson(r) : JSON.stringify(r)));
  for (let start = 0; start < Math.max(1, records.length); start += STATES_PER_CALL) {
    const slice = records.slice(start, start + STATES_PER_CALL);
    const at = Date.now();
    const routed = routedBlocks({ texts: texts.slice(start, start + STATES_PER_CALL), values: () => slice }, [destination], rules);
    const final = start + STATES_PER_CALL >= records.length;
    const answer = Number(
      await APPEND_STATES.run(
        redis,
        2 + DESTINATION_KEYS,
        archive.stream,
        keys.backfill,
        ...destinationKeys(keys, at),
        last,
        job.backfillId,
        final ? 'final' : 'part',
        String(slice.length),
        ...blockArgs(routed, (block) => entryFields(block)),
        ...shareArgs(routed, at).slice(0, SHARE_ARGS),
      ),
    );
    if (answer !== 1) return answer;
  }
  return 1;
}

