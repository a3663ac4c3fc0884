import type { RedisClient } from '../../src/core/redis/cluster';
import type { Logger } from '../../src/core/logger';
import type { LeaderLock } from '../delivery/leader-lock';
import type { StreamReadTurns } from '../delivery/read-turns';
import { compareStreamIds, entryIdOf, ENSURE_COUNT, type DeliveryKeys } from '../delivery/keys';
import { COMPACTED_LEVEL, entryFields, entryQueuedSince, entryRecordCount, entryRecords } from '../routing/stream-entries';
import { LuaScript } from '../../src/core/redis/lua-script';

/**
 * Rewrites the newest entries of a destination's stream, `oldIds` (oldest first, through the last
 * entry when read), as fewer, larger blocks, if the lease is held and the cursor, spilled point
 * and entries are as read. KEYS: lock, stream, cursor, spilled, record count. ARGV: lease token,
 * cursor and spilled id as read ('' for none), the count of old entries, their ids, then per new
 * block its six fields (jobs/routing/stream-entries.ts). Entries are only ever added at the end, and the
 * router may have added some since the read: those are moved behind the new blocks, unchanged but
 * for their id and a `t` that keeps when they were queued, so that the order holds and a busy
 * router never keeps a pass from applying. XDEL is the first write, so the script runs on a full
 * Redis, where it frees the most (src/core/redis/out-of-memory.ts).
 */
const COMPACT = new LuaScript(`${ENSURE_COUNT}
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if (redis.call('GET', KEYS[3]) or '') ~= ARGV[2] or (redis.call('GET', KEYS[4]) or '') ~= ARGV[3] then return -1 end
local m = tonumber(ARGV[4])
local first, last = 5, 4 + m
-- Nothing is removed from between the old entries but by the spiller (whose point was checked), so
-- finding as many as were read from the first to the last is finding those that were read.
if #redis.call('XRANGE', KEYS[2], ARGV[first], ARGV[last], 'COUNT', m + 1) ~= m then return -1 end
ensureCount(KEYS[2], KEYS[5])
local newer = redis.call('XRANGE', KEYS[2], '(' .. ARGV[last], '+')
for i = first, last, 500 do redis.call('XDEL', KEYS[2], unpack(ARGV, i, math.min(i + 499, last))) end
for _, e in ipairs(newer) do redis.call('XDEL', KEYS[2], e[1]) end
for i = last + 1, #ARGV, 6 do redis.call('XADD', KEYS[2], '*', unpack(ARGV, i, i + 5)) end
for _, e in ipairs(newer) do
  local fields, dated = e[2], false
  for j = 1, #fields, 2 do if fields[j] == 't' then dated = true end end
  if not dated then
    fields[#fields + 1] = 't'
    fields[#fields + 1] = string.match(e[1], '^(%d+)')
  end
  redis.call('XADD', KEYS[2], '*', unpack(fields))
end
return 1`);

/**
 * Records per compacted block. A typical 450-byte stored event takes about 66 bytes of Redis in a
 * block of 100 against about 112 in blocks of 6 and 256 alone (at the compactor's level; the
 * router's faster one takes 128 in blocks of 6, bench/RESULTS.md), and a batch
 * that needs one record of a block decodes all of it, so larger blocks buy little.
 */
export const COMPACT_BLOCK_RECORDS = 100;

/**
 * Entries looked at from the end of the stream per pass: bounds one pass's Redis and CPU time. A
 * router that adds more between two passes (1 s) writes blocks of many records anyway.
 */
const SCAN_ENTRIES = 2000;

/** Entries of the first read back from the end; each next read takes four times as many. */
const FIRST_PAGE_ENTRIES = 16;

/** Fewer small entries than this, holding fewer than a block's records, wait for more. */
const MIN_ENTRIES = 8;

/** A rewrite read from Redis, to be committed only if the stream is as it was read. */
export interface CompactionPlan {
  cursor: string;
  spilled: string;
  /** The entries to replace, oldest first, through `tail`. */
  oldIds: string[];
  /** The new blocks, in order: their records and when the oldest of them was queued. */
  blocks: Array<{ records: string[]; queuedSince: number }>;
}

/**
 * Keeps a destination's backlog dense while nothing delivers it: disabled, waiting for settings it
 * can take, or failing (its delivery loop stalled between attempts, jobs/delivery/read-turns.ts). The router writes what one routing step brings as one block, so a quiet tracker's
 * backlog is a long run of blocks of one or a few records, each paying a stream entry's overhead and
 * compressing poorly. Every pass rewrites the newest run of small blocks as blocks of
 * COMPACT_BLOCK_RECORDS, oldest first, so the records keep their order; a record's id changes with
 * its block, which is why this runs only where no delivery has read them: under the destination's
 * lease (checked by the script), past every entry its delivery loop, if any, has read. Only the newest run of
 * small entries is rewritten, so a pass costs what arrived since the last one: small entries behind
 * a full block (written before the destination was disabled, or before a restart) stay as they
 * are, and are the first to go to disk.
 */
export class StreamCompactor {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: DeliveryKeys,
    private readonly lock: LeaderLock,
    private readonly logger: Logger,
    /** Given when a delivery loop runs beside: passes then run only in turn with it, while it is stalled. */
    private readonly turns?: StreamReadTurns,
  ) {}

  /** One pass: the entries removed (0 when there was nothing to do or the stream moved). */
  async compact(): Promise<number> {
    if (!this.turns) return this.pass('0-0');
    return (await this.turns.whileStalled((readThrough) => this.pass(readThrough))) ?? 0;
  }

  private async pass(readThrough: string): Promise<number> {
    const plan = await this.plan(readThrough);
    if (!plan || !(await this.commit(plan))) return 0;
    const removed = plan.oldIds.length - plan.blocks.length;
    this.logger.debug({ entries: plan.oldIds.length, blocks: plan.blocks.length }, 'queued records compacted into larger blocks');
    return removed;
  }

  /**
   * What a pass would rewrite, or undefined when the newest entries are few or large already.
   * `readThrough`: the last entry a delivery loop beside has read, left alone with all before it.
   */
  async plan(readThrough = '0-0'): Promise<CompactionPlan | undefined> {
    const [cursor = null, spilled = null] = await this.redis.mget(this.keys.cursor, this.keys.spilled);
    // An entry at or before the cursor's own or the spilled one's holds records delivered or on disk.
    let floor = readThrough;
    for (const id of [cursor, spilled]) if (id !== null && compareStreamIds(entryIdOf(id), floor) > 0) floor = entryIdOf(id);
    const small: Array<[string, Buffer[]]> = [];
    let records = 0;
    // Read back from the end a page at a time: a backlog already in full blocks costs one small
    // read a pass, not SCAN_ENTRIES entries' worth of blocks.
    let end = '+';
    let page = FIRST_PAGE_ENTRIES;
    scan: while (small.length < SCAN_ENTRIES) {
      const raw = await this.redis.xrevrangeBuffer(this.keys.stream, end, '-', 'COUNT', page);
      for (const [rawId, fields] of raw) {
        const id = rawId.toString();
        const count = entryRecordCount(fields);
        if (compareStreamIds(id, floor) <= 0 || count >= COMPACT_BLOCK_RECORDS) break scan;
        small.push([id, fields]);
        records += count;
      }
      if (raw.length < page) break;
      end = `(${small[small.length - 1]![0]}`;
      page = Math.min(SCAN_ENTRIES - small.length, page * 4);
    }
    small.reverse();
    const blockCount = Math.ceil(records / COMPACT_BLOCK_RECORDS);
    if (small.length < 2 || blockCount >= small.length || (small.length < MIN_ENTRIES && records < COMPACT_BLOCK_RECORDS)) return undefined;
    const blocks: CompactionPlan['blocks'] = [];
    for (const [id, fields] of small) {
      const since = entryQueuedSince(id, fields);
      for (const { json } of entryRecords(id, fields)) {
        let block = blocks[blocks.length - 1];
        if (!block || block.records.length >= COMPACT_BLOCK_RECORDS) blocks.push((block = { records: [], queuedSince: since }));
        block.records.push(json);
        block.queuedSince = Math.min(block.queuedSince, since);
      }
    }
    return { cursor: cursor ?? '', spilled: spilled ?? '', oldIds: small.map(([id]) => id), blocks };
  }

  /** Applies `plan` if the lease is held and the old entries, cursor and spilled point are as read; true when applied. */
  async commit(plan: CompactionPlan): Promise<boolean> {
    const k = this.keys;
    const fields = plan.blocks.flatMap((b) => entryFields(b.records, b.queuedSince, COMPACTED_LEVEL));
    const answer = await COMPACT.run(this.redis, 5, k.lock, k.stream, k.cursor, k.spilled, k.queued, this.lock.token, plan.cursor, plan.spilled, plan.oldIds.length, ...plan.oldIds, ...fields);
    return answer === 1;
  }
}
