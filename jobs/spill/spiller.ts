import { statfs } from 'node:fs/promises';
import type { RedisClient } from '../../src/core/redis/cluster';
import type { Logger } from '../../src/core/logger';
import { sleep } from '../../src/core/sleep';
import type { LeaderLock } from '../delivery/leader-lock';
import { compareStreamIds, entryIdOf, nextStreamId, type DeliveryKeys as Keys } from '../delivery/keys';
import { readWholeEntries } from '../delivery/stream-read';
import { Spool, type SpooledEntry } from './spool';
import { DestinationStatusStore } from '../delivery/destination-status';
import type { StreamCompactor } from './compactor';
import { LuaScript } from '../../src/core/redis/lua-script';

/**
 * Commits a spilled frame: RedisClient lets go of the records the frame holds, if this process still
 * holds the lease and the spool is where Redis thinks it is (so a late or repeated call changes
 * nothing). KEYS: lock, spilled, stream, status, record count. ARGV: lease token, the spilled id
 * the frame follows ('' for none), the frame's last record id, the entry id below which the stream
 * is trimmed, records in the frame.
 */
const COMMIT_SPILL = new LuaScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if (redis.call('GET', KEYS[2]) or '') ~= ARGV[2] then return -1 end
-- XTRIM first: it frees, so a full Redis still lets records go to disk (src/core/redis/out-of-memory.ts).
redis.call('XTRIM', KEYS[3], 'MINID', ARGV[4])
redis.call('SET', KEYS[2], ARGV[3])
if redis.call('EXISTS', KEYS[5]) == 0 then
  -- A stream from before record counts holds one record an entry; the spilled ones are gone now.
  redis.call('SET', KEYS[5], redis.call('XLEN', KEYS[3]))
else
  redis.call('DECRBY', KEYS[5], ARGV[5])
end
redis.call('HINCRBY', KEYS[4], 'spilledRecords', ARGV[5])
return 1`);

export interface SpillOptions {
  /** Records of one destination that may wait in Redis; beyond it the oldest go to disk. */
  capRecords: number;
  /** Records per frame (one fsync, one Redis call). */
  frameRecords: number;
  /** How often the stream's length is looked at. */
  checkMs: number;
  /**
   * True while Redis as a whole is filling up (past REDIS_MEMORY_SPILL_PERCENT of its limit): then
   * every destination keeps at most PRESSURE_CAP_RECORDS in Redis, whatever its own cap.
   */
  underPressure?: () => boolean;
}

/** A destination's Redis cap while Redis is short of memory. */
export const PRESSURE_CAP_RECORDS = 1000;

export const DEFAULT_SPILL_OPTIONS: SpillOptions = { capRecords: 100_000, frameRecords: 5000, checkMs: 1000 };

/** Why spilling stopped: the spool no longer matches Redis and must be opened again. */
export class SpillStoppedError extends Error {
  override name = 'SpillStoppedError';
}

/**
 * Keeps one destination's stream under its cap by moving its oldest undelivered records to the
 * spool, while this process holds the destination's lease — whether the destination delivers,
 * fails, waits for its settings, or is disabled. Once the stream passes the cap it is brought down
 * to half of it, in frames: read the oldest past the cursor, append them to the spool (fsynced),
 * then let Redis drop them in one atomic step. A crash between the two leaves a frame Redis never
 * agreed to, which the next open cuts off (jobs/spill/spool.ts): nothing lost, nothing doubled.
 */
export class Spiller {
  private readonly status: DestinationStatusStore;
  /** Undelivered records (Redis and disk) at the last look, for the growth rate. */
  private last: { at: number; queued: number } | undefined;
  /** Records per second the backlog grows by (negative: shrinks), averaged over about a minute. */
  private growth = 0;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly lock: LeaderLock,
    private readonly spool: Spool,
    private readonly opts: SpillOptions,
    private readonly logger: Logger,
    /** Keeps the backlog dense where nothing reads it, in turn with the spills (jobs/spill/compactor.ts). */
    private readonly compactor?: StreamCompactor,
  ) {
    this.status = new DestinationStatusStore(redis, keys);
  }

  /** Checks every `checkMs` until `signal` aborts; throws SpillStoppedError when the spool must be reopened. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.spillExcess(signal);
        // After spilling: the spiller moves the oldest entries, the compactor rewrites the newest.
        await this.compactor?.compact().catch((err: unknown) => {
          if (!signal.aborted) this.logger.warn({ err: (err as Error).message }, 'compacting the backlog failed; trying again');
        });
        await this.reportGrowth();
      } catch (err) {
        if (err instanceof SpillStoppedError) throw err;
        if (!signal.aborted) this.logger.warn({ err: (err as Error).message }, 'spilling to disk failed; trying again');
      }
      await sleep(this.opts.checkMs, signal).catch(() => undefined);
    }
  }

  /**
   * Leaves in the status how fast the backlog grows and what room is left, so that an operator sees
   * how long until the Redis cap or the disk is reached (DestinationStatus.fullInSeconds).
   */
  private async reportGrowth(): Promise<void> {
    const cursor = (await this.redis.get(this.keys.cursor)) ?? '0-0';
    const disk = this.spool.backlog(cursor);
    const queued = (await this.inRedis()) + disk.records;
    const now = Date.now();
    if (this.last && now > this.last.at) {
      const seconds = (now - this.last.at) / 1000;
      const weight = 1 - Math.exp(-seconds / 60);
      this.growth += weight * ((queued - this.last.queued) / seconds - this.growth);
    }
    this.last = { at: now, queued };
    const fs = await statfs(this.spool.dir);
    await this.status.setRoom({
      growthPerSecond: this.growth,
      capRecords: this.opts.capRecords,
      diskFreeBytes: fs.bavail * fs.bsize,
      // Before anything is spilled: about what a typical event takes in a frame.
      diskBytesPerRecord: disk.records > 0 ? disk.bytes / disk.records : 40,
    });
  }

  /** Records of this destination in Redis (the stream's entries may hold many each). */
  private async inRedis(): Promise<number> {
    const [count, length] = await Promise.all([this.redis.get(this.keys.queued), this.redis.xlen(this.keys.stream)]);
    return count === null ? length : Number(count);
  }

  /** Brings the stream down to half its cap (see underPressure) if it is above it. Returns the records moved. */
  async spillExcess(signal?: AbortSignal): Promise<number> {
    const before = await this.inRedis();
    const cap = this.opts.underPressure?.() ? Math.min(this.opts.capRecords, PRESSURE_CAP_RECORDS) : this.opts.capRecords;
    if (before <= cap) return 0;
    let excess = before - Math.floor(cap / 2);
    let moved = 0;
    while (excess > 0 && !signal?.aborted) {
      const n = await this.spool.spillFrame(() => this.oldest(Math.min(excess, this.opts.frameRecords)), (entries) => this.commit(entries));
      if (n === 0) break;
      moved += n;
      excess -= n;
    }
    if (moved > 0) this.logger.info({ records: moved, inRedis: before - moved }, 'records moved from Redis to the disk spool');
    return moved;
  }

  /** The oldest undelivered records in the stream, whole entries, at least `wanted` if there are. */
  private async oldest(wanted: number): Promise<SpooledEntry[]> {
    return readWholeEntries(this.redis, this.keys.stream, (await this.redis.get(this.keys.cursor)) ?? '0-0', wanted);
  }

  /** Tells Redis the frame is on disk; throws SpillStoppedError when Redis does not agree or cannot be asked. */
  private async commit(entries: SpooledEntry[]): Promise<void> {
    const last = entries[entries.length - 1]!.id;
    let committed: unknown;
    try {
      committed = await COMMIT_SPILL.run(this.redis, 5, this.keys.lock, this.keys.spilled, this.keys.stream, this.keys.status, this.keys.queued, this.lock.token, this.spool.committedThrough ?? '', last, nextStreamId(entryIdOf(last)), entries.length);
    } catch (err) {
      // Unknown whether Redis took it: only reopening (which asks Redis) can tell.
      throw new SpillStoppedError(`committing a spilled frame failed: ${(err as Error).message}`);
    }
    if (committed !== 1) throw new SpillStoppedError(committed === 0 ? 'the lease was lost while spilling' : 'the spool and Redis disagree on what was spilled');
    this.spool.committedThrough = last;
    await this.status.setSpool(this.spool.backlog((await this.redis.get(this.keys.cursor)) ?? '0-0')).catch(() => undefined);
  }
}

/** Records Redis says are on disk past the cursor are not in this host's spool directory. */
export class SpoolMissingError extends Error {
  override name = 'SpoolMissingError';
}

/**
 * Opens a destination's spool as Redis sees it: frames Redis never agreed to are cut off, delivered
 * segments deleted. Refuses when Redis says undelivered records were spilled that this directory
 * does not hold (another host spilled them, or the directory was lost).
 */
export async function openSpool(redis: RedisClient, keys: Keys, dir: string): Promise<Spool> {
  const [committed, cursor] = await Promise.all([redis.get(keys.spilled), redis.get(keys.cursor)]);
  const delivered = cursor ?? '0-0';
  const spool = await Spool.open(dir, committed, delivered);
  if (committed !== null && compareStreamIds(committed, delivered) > 0 && (spool.lastId === null || compareStreamIds(spool.lastId, committed) < 0)) {
    await spool.close();
    throw new SpoolMissingError(`records up to ${committed} were moved to a disk spool that is not in ${dir} on this host; give every worker the same DATA_DIR (a shared volume) or run this destination's worker where the spool is`);
  }
  return spool;
}
