import { holdsBigInt, stringifyExactJson } from '../../src/core/records/exact-json';
import type { TrackedRecord } from '../../src/core/records/types';
import { hasRules } from '../../src/core/rules/schema';
import type { RulesCache } from '../../src/core/rules/compile';
import type { Destination } from '../../src/core/trackers/types';
import { bucketOf } from '../../src/core/series/minutes';
import { seriesKey, seriesSlot } from '../delivery/destination-series';
import type { DeliveryKeys } from '../delivery/keys';
import { recordCountOf, type BlockRecords, type LineBlock } from './stream-entries';

/**
 * Destination rules run here, as records are routed: what a destination's rules skip never enters
 * its stream, so a Sheet that takes 2 % of the traffic costs 2 % of the Redis memory and of the
 * delivery work. A routing step's records go to each destination as one block of their texts;
 * destinations with the same rules (all those without any, typically) share one block, and a
 * destination whose rules keep records as they are reuses their texts rather than writing them again.
 */

/** What a destination's rules did with a routing step's records, for its status counters. */
export interface RuleCounts {
  /** Records its filter was false for. */
  filtered: number;
  /** Records outside its sample. */
  sampled: number;
  /** Records its filter could not be evaluated on (not delivered either). */
  errors: number;
  /** The message of the last such error. */
  lastError?: string;
}

export interface DestinationShare {
  /** Index into `blocks`. */
  block: number;
  counts: RuleCounts | undefined;
}

export interface RoutedBlocks {
  /** Distinct blocks of records; `blocks[0]` is every record as accepted. */
  blocks: BlockRecords[];
  /** One per destination, in the order given. */
  shares: DestinationShare[];
}

/** The records of a routing step, as texts, and as values when a destination's rules need them. */
export interface StepRecords {
  texts: readonly string[];
  /** The same records, in the same order; integers beyond 2^53 as bigints. Called at most once. */
  values: () => readonly TrackedRecord[];
  /** The same texts as one block, where the step holds them so (the router): `blocks[0]`, written without reading `texts`. */
  lines?: LineBlock;
}

/** Every record to every destination: the step of a tracker without rules costs nothing more than before. */
function unruled(step: StepRecords, destinations: readonly Destination[]): RoutedBlocks {
  return { blocks: [step.lines ?? step.texts], shares: destinations.map(() => ({ block: 0, counts: undefined })) };
}

function textOf(record: TrackedRecord): string {
  return holdsBigInt(record.properties) ? stringifyExactJson(record) : JSON.stringify(record);
}

export function routedBlocks(step: StepRecords, destinations: readonly Destination[], cache: RulesCache): RoutedBlocks {
  if (!destinations.some((d) => hasRules(d.rules))) return unruled(step, destinations);
  const values = step.values();
  const blocks: BlockRecords[] = [step.lines ?? step.texts];
  const byRules = new Map<string, DestinationShare>();
  const shares = destinations.map((d): DestinationShare => {
    if (!hasRules(d.rules)) return { block: 0, counts: undefined };
    const key = JSON.stringify(d.rules);
    const same = byRules.get(key);
    if (same) return same;
    const rules = cache.get(d.rules, key);
    const counts: RuleCounts = { filtered: 0, sampled: 0, errors: 0 };
    const texts: string[] = [];
    values.forEach((record, i) => {
      const verdict = rules.apply(record);
      if (verdict.kind === 'deliver') texts.push(verdict.record === record ? step.texts[i]! : textOf(verdict.record));
      else if (verdict.kind === 'skip') counts[verdict.rule === 'filter' ? 'filtered' : 'sampled']++;
      else {
        counts.errors++;
        counts.lastError = verdict.message;
      }
    });
    blocks.push(texts);
    const share = { block: blocks.length - 1, counts };
    byRules.set(key, share);
    return share;
  });
  return { blocks, shares };
}

/**
 * ARGV of a step's blocks, as TO_DESTINATIONS reads them: the block count, then per block its
 * record count, its number of entry fields and those fields (jobs/routing/stream-entries.ts).
 */
export function blockArgs(routed: RoutedBlocks, fieldsOf: (records: BlockRecords) => Array<string | Buffer>): Array<string | Buffer> {
  const args: Array<string | Buffer> = [String(routed.blocks.length)];
  for (const records of routed.blocks) {
    const count = recordCountOf(records);
    const fields = count > 0 ? fieldsOf(records) : [];
    args.push(String(count), String(fields.length), ...fields);
  }
  return args;
}

/**
 * ARGV of each destination's share, as TO_DESTINATIONS reads them: its block (from 1), its rule
 * counts, and where its pictures over time count them (jobs/delivery/destination-series.ts: the fields of
 * `at`'s minute and when that bucket expires; the same for every destination of a step).
 */
export function shareArgs(routed: RoutedBlocks, at = Date.now()): string[] {
  const skipped = seriesSlot({ series: '' }, 'skipped', at);
  const errors = seriesSlot({ series: '' }, 'filterErrors', at);
  return routed.shares.flatMap(({ block, counts }) => [
    String(block + 1),
    String(counts?.filtered ?? 0),
    String(counts?.sampled ?? 0),
    String(counts?.errors ?? 0),
    counts?.lastError ?? '',
    skipped.field,
    errors.field,
    String(skipped.expiresAt),
  ]);
}

/** The KEYS of each destination, as TO_DESTINATIONS reads them: its stream, record count, status, and its pictures' bucket of `at`. */
export function destinationKeys(keys: Pick<DeliveryKeys, 'stream' | 'queued' | 'status' | 'series'>, at = Date.now()): string[] {
  return [keys.stream, keys.queued, keys.status, seriesKey(keys, bucketOf(at))];
}

/** ARGV a destination's share takes (shareArgs), and KEYS a destination takes (destinationKeys). */
export const SHARE_ARGS = 8;
export const DESTINATION_KEYS = 4;

/**
 * Routing steps (their first block: the records as accepted) a tracker partition keeps for
 * `destinations preview` (jobs/routing/recent-records.ts): a few dozen steps are the last few hundred
 * records of a quiet tracker and the last thousands of a busy one, at the block's compressed size.
 */
export const RECENT_STEPS = 32;

/**
 * Routing steps an archive stream holds at most while its archiver is behind (its disk full, no
 * worker able to hold its lease): past it the oldest go, and the archiver reports the gap
 * (jobs/history/archiver.ts). An archive that cannot be written must not fill Redis and stop ingest.
 */
export const ARCHIVE_STREAM_CAP = 100_000;

/**
 * Lua: `readBlocks(a)` reads blockArgs starting at ARGV[a] and returns them with the index after
 * them; `keepRecent(key, blocks)` keeps the first block (every record as accepted) in the
 * partition's capped stream of recent records; `keepArchive(key, blocks)` adds it to the
 * partition's archive stream, which the archiver drains to disk (jobs/history/archiver.ts); `toDestination(i, blocks, d)` appends a destination's block to its stream (KEYS[i]), adds
 * its records to its count (KEYS[i + 1]), and its rule counts to its status (KEYS[i + 2]) and to
 * its pictures' minute (KEYS[i + 3]), from its share at ARGV[d]. Needs ENSURE_COUNT (jobs/delivery/keys.ts) before it.
 */
export const TO_DESTINATIONS = `
local function readBlocks(a)
  local blocks = {}
  local n = tonumber(ARGV[a])
  a = a + 1
  for b = 1, n do
    local count, fields = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
    blocks[b] = {count, a + 2, a + 1 + fields}
    a = a + 2 + fields
  end
  return blocks, a
end
local function keepRecent(key, blocks)
  local block = blocks[1]
  if block[1] > 0 then redis.call('XADD', key, 'MAXLEN', ${RECENT_STEPS}, '*', unpack(ARGV, block[2], block[3])) end
end
local function keepArchive(key, blocks)
  local block = blocks[1]
  if block[1] > 0 then redis.call('XADD', key, 'MAXLEN', '~', ${ARCHIVE_STREAM_CAP}, '*', unpack(ARGV, block[2], block[3])) end
end
local function toDestination(i, blocks, d)
  ensureCount(KEYS[i], KEYS[i + 1])
  local block = blocks[tonumber(ARGV[d])]
  if block[1] > 0 then
    redis.call('XADD', KEYS[i], '*', unpack(ARGV, block[2], block[3]))
    redis.call('INCRBY', KEYS[i + 1], block[1])
  end
  local skipped = tonumber(ARGV[d + 1]) + tonumber(ARGV[d + 2])
  if ARGV[d + 1] ~= '0' then redis.call('HINCRBY', KEYS[i + 2], 'filtered', ARGV[d + 1]) end
  if ARGV[d + 2] ~= '0' then redis.call('HINCRBY', KEYS[i + 2], 'sampled', ARGV[d + 2]) end
  if skipped > 0 then
    redis.call('HINCRBY', KEYS[i + 3], ARGV[d + 5], skipped)
    redis.call('EXPIREAT', KEYS[i + 3], ARGV[d + 7])
  end
  if ARGV[d + 3] ~= '0' then
    redis.call('HINCRBY', KEYS[i + 2], 'filterErrors', ARGV[d + 3])
    redis.call('HSET', KEYS[i + 2], 'lastFilterError', ARGV[d + 4])
    redis.call('HINCRBY', KEYS[i + 3], ARGV[d + 6], ARGV[d + 3])
    redis.call('EXPIREAT', KEYS[i + 3], ARGV[d + 7])
  end
end`;
