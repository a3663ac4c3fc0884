import path from 'node:path';
import type { RedisClient } from '../../src/core/redis/cluster';
import type { Logger } from '../../src/core/logger';
import { sleep } from '../../src/core/sleep';
import { ArchiveFiles, dayOfId } from './archive-files';
import type { LeaderLock } from '../delivery/leader-lock';
import type { Backfiller } from './backfill';
import type { Tracker } from '../../src/core/trackers/types';
import { compareStreamIds, entryIdOf, nextStreamId, type ArchiveKeys } from '../delivery/keys';
import { readEntriesAfter } from '../delivery/stream-read';
import { partsSpan } from '../spill/frames';
import { archiveParts } from './archive-parts';
import { LuaScript } from '../../src/core/redis/lua-script';

/**
 * Commits an archived frame: Redis lets go of the records the frame holds, if this process still
 * holds the lease and the files are where Redis thinks they are. KEYS: lock, archived, stream,
 * status. ARGV: lease token, the archived id the frame follows ('' for none), the frame's last
 * record id, the entry id below which the stream is trimmed, records in the frame.
 */
const COMMIT_ARCHIVE = new LuaScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if (redis.call('GET', KEYS[2]) or '') ~= ARGV[2] then return -1 end
-- XTRIM first: it frees, so a full Redis still lets records go to disk (src/core/redis/out-of-memory.ts).
local trimmed = redis.call('XTRIM', KEYS[3], 'MINID', ARGV[4])
redis.call('SET', KEYS[2], ARGV[3])
redis.call('HINCRBY', KEYS[4], 'records', ARGV[5])
redis.call('HINCRBY', KEYS[4], 'entries', trimmed)
redis.call('HDEL', KEYS[4], 'lastError')
return 1`);

/**
 * Counts what the stream's cap dropped before it was archived (ARCHIVE_STREAM_CAP): every entry ever
 * added is either still in the stream, or was trimmed by a commit (counted in the status's
 * `entries`), or was dropped. Reports the dropped ones once, in `lastGap`. KEYS: stream, status.
 * ARGV: the archived id, for the message. Returns the entries dropped since the last look.
 */
const COUNT_GAP = new LuaScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local info = redis.call('XINFO', 'STREAM', KEYS[1])
local added, length = 0, 0
for i = 1, #info, 2 do
  if info[i] == 'entries-added' then added = info[i + 1] end
  if info[i] == 'length' then length = info[i + 1] end
end
local dropped = added - length - tonumber(redis.call('HGET', KEYS[2], 'entries') or '0')
if dropped <= 0 then return 0 end
redis.call('HINCRBY', KEYS[2], 'entries', dropped)
redis.call('HSET', KEYS[2], 'lastGap', dropped .. ' routing steps after ' .. ARGV[1] .. ' were dropped from the archive stream before they reached the disk, at ' .. ARGV[2] .. ': the archiver was behind by more than its cap')
return dropped`);

/** How often retention runs and the size on disk is reported. */
const HOUSEKEEPING_MS = 60_000;
const DAY_MS = 86_400_000;

export interface ArchiverOptions {
  /** Days of records kept; older days are deleted whole. */
  days: number;
  /** Records per frame at most (one fsync, one Redis call). Default 5 000. */
  frameRecords: number;
  /** How often the stream is looked at once it is caught up (its last frame was not full). Default 1 000 ms. */
  checkMs: number;
}

export const DEFAULT_ARCHIVER_OPTIONS: Omit<ArchiverOptions, 'days'> = { frameRecords: 5000, checkMs: 1000 };

/** Archiving stopped: the files no longer match Redis and must be opened again. */
export class ArchiveStoppedError extends Error {
  override name = 'ArchiveStoppedError';
}

/** The archive directory of a tracker partition under the archive root (ARCHIVE_DIR, default DATA_DIR/archive). */
export function archiveDirectory(root: string, trackerId: string, partition = 0): string {
  return path.join(root, partition ? `${trackerId}.p${partition}` : trackerId);
}

/**
 * Moves one tracker partition's archive stream to its files, while this process holds the
 * partition's archive lease: read what follows the `archived` id, append it as one frame (fsynced),
 * then let Redis drop it in one atomic step; a crash between the two leaves a frame Redis never
 * agreed to, which the next open cuts off. Once a minute, days past the retention are deleted and
 * the size on disk is reported in the status.
 */
/** The backfills an archiver moves along after each round (jobs/history/backfill.ts), with the tracker as it is now. */
export interface ArchiveBackfills {
  backfiller: Backfiller;
  tracker: () => Promise<Tracker | undefined>;
}

export class Archiver {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: ArchiveKeys,
    private readonly lock: LeaderLock,
    private readonly files: ArchiveFiles,
    private readonly opts: ArchiverOptions,
    private readonly logger: Logger,
    private readonly backfills?: ArchiveBackfills,
  ) {}

  async run(signal: AbortSignal): Promise<void> {
    await this.adoptFiles();
    let housekeepingAt = 0;
    while (!signal.aborted) {
      let busy = false;
      try {
        // What was accepted goes to disk first: a backfill reads the archive, and live records come
        // before history. Full frames follow each other; one that is not (caught up) is the last
        // until the next look, so that steady traffic makes a frame (an fsync and four Redis
        // round trips) each checkMs rather than one for every few records (bench/RESULTS.md).
        while (!signal.aborted && (await this.archiveFrame()) >= this.opts.frameRecords);
        if (this.backfills && !signal.aborted) busy = await this.backfills.backfiller.step(await this.backfills.tracker());
        if (Date.now() >= housekeepingAt) {
          await this.housekeeping();
          housekeepingAt = Date.now() + HOUSEKEEPING_MS;
        }
      } catch (err) {
        if (err instanceof ArchiveStoppedError) throw err;
        if (!signal.aborted) this.logger.warn({ err: (err as Error).message }, 'archiving failed; trying again');
      }
      if (!busy) await sleep(this.opts.checkMs, signal).catch(() => undefined);
    }
  }

  /**
   * Redis knows of nothing archived while the files hold records (Redis lost its data): the files
   * are history, and archiving goes on after their last record. Files that hold less than Redis says
   * (another host's disk, or a lost directory) are reported and archiving goes on here: the missing
   * days are wherever they were written (docs/history.md, "The archive": give workers one ARCHIVE_DIR).
   */
  private async adoptFiles(): Promise<void> {
    const archived = await this.redis.get(this.keys.archived);
    if (archived === null && this.files.lastId !== null) await this.redis.set(this.keys.archived, this.files.lastId, 'NX');
    if (archived !== null && (this.files.lastId === null || compareStreamIds(this.files.lastId, archived) < 0)) {
      const message = `records up to ${archived} were archived in a directory that is not ${this.files.dir} on this host; archiving goes on here, and history before it is where it was written (give every worker the same ARCHIVE_DIR)`;
      this.logger.warn({ archived, dir: this.files.dir }, message);
      await this.redis.hset(this.keys.status, 'missingThrough', archived);
    }
  }

  /**
   * The stream dropped steps before they were archived (it is capped, see ARCHIVE_STREAM_CAP): the
   * gap is reported (`lastGap`, logged), and archiving goes on with what the stream still holds.
   */
  private async reportGap(archived: string | null): Promise<void> {
    const dropped = Number(await COUNT_GAP.run(this.redis, 2, this.keys.stream, this.keys.status, archived ?? 'the start', new Date().toISOString()));
    if (dropped > 0) this.logger.error({ archived, dropped }, 'routing steps were dropped from the archive stream before they reached the disk: the archiver was behind by more than its cap');
  }

  /** Appends the next frame and commits it; returns the records archived (0: the stream had none). */
  async archiveFrame(): Promise<number> {
    const archived = await this.redis.get(this.keys.archived);
    await this.reportGap(archived);
    const cursor = archived ?? '0-0';
    const parts = await archiveParts(await readEntriesAfter(this.redis, this.keys.stream, cursor, this.opts.frameRecords), cursor);
    if (parts.length === 0) return 0;
    await this.files.append(parts);
    const { last, count } = partsSpan(parts);
    let committed: unknown;
    try {
      committed = await COMMIT_ARCHIVE.run(this.redis, 4, this.keys.lock, this.keys.archived, this.keys.stream, this.keys.status, this.lock.token, archived ?? '', last, nextStreamId(entryIdOf(last)), count);
    } catch (err) {
      throw new ArchiveStoppedError(`committing an archived frame failed: ${(err as Error).message}`);
    }
    if (committed !== 1) throw new ArchiveStoppedError(committed === 0 ? 'the archive lease was lost' : 'the archive files and Redis disagree on what was archived');
    return count;
  }

  /** Deletes the days past the retention, and reports what the files hold. */
  private async housekeeping(): Promise<void> {
    const cutoff = dayOfId(`${Date.now() - this.opts.days * DAY_MS}-0`);
    const deleted = await this.files.deleteDaysBefore(cutoff);
    if (deleted > 0) this.logger.info({ segments: deleted, before: cutoff }, 'archive: days past the retention deleted');
    const size = await this.files.size();
    await this.redis.hset(this.keys.status, 'bytes', String(size.bytes), 'oldestDay', size.oldestDay ?? '', 'days', String(this.opts.days), 'checkedAt', new Date().toISOString());
  }
}
