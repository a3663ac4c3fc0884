import type { RedisClient } from '../../src/core/redis/cluster';
import type { Keyspace } from '../../src/core/redis/keyspace';
import { sleep } from '../../src/core/sleep';
import { RulesCache } from '../../src/core/rules/compile';
import type { Tracker } from '../../src/core/trackers/types';
import type { ImportSink } from '../../src/core/import/importer';
import { HISTORY_CAP_RECORDS } from './backfill';
import { blockArgs, DESTINATION_KEYS, destinationKeys, routedBlocks, SHARE_ARGS, shareArgs, TO_DESTINATIONS, type StepRecords } from '../routing/destination-blocks';
import { archiveKeys, deliveryKeys, ENSURE_COUNT } from '../delivery/keys';
import { entryFields } from '../routing/stream-entries';
import { LuaScript } from '../../src/core/redis/lua-script';

/**
 * Imported records enter the relay here, in the lane history takes (jobs/history/backfill.ts): each
 * destination's history stream, through its rules as they are now, which its delivery loop reads
 * only while nothing live waits, and as re-sends, so that a destination keeps one record per `_id`
 * however often a file is imported. They are archived too, as accepted records are, so that a
 * destination added later can be backfilled with them. Never the live streams: an import of a year
 * cannot delay a live record by one.
 *
 * The lane is bounded: a step waits while a destination's history lane holds HISTORY_CAP_RECORDS,
 * while the archiver is behind by ARCHIVE_BEHIND_MAX steps, and while Redis is past its memory
 * budget's high watermark; an import goes at the pace of delivery and never fills Redis.
 */

/** Archive stream entries past which an import waits for the archiver (its cap is 100 000: far below, so that no import step is ever dropped). */
export const ARCHIVE_BEHIND_MAX = 1000;

/**
 * One step of an import: the archive (when kept) and every destination's history lane, or
 * nothing. KEYS: the archive stream, then per destination its history stream, history count,
 * status and pictures' bucket. ARGV: the history cap, the archive's cap, whether the tracker
 * archives ('1'/'0'), then the blocks and shares. 1: written; 0: a history lane is full; -1: the
 * archiver is behind.
 */
const IMPORT_STEP = new LuaScript(`${ENSURE_COUNT}${TO_DESTINATIONS}
local cap = tonumber(ARGV[1])
for j = 0, (#KEYS - 1) / ${DESTINATION_KEYS} - 1 do
  if tonumber(redis.call('GET', KEYS[3 + ${DESTINATION_KEYS} * j]) or '0') >= cap then return 0 end
end
if ARGV[3] == '1' and redis.call('XLEN', KEYS[1]) >= tonumber(ARGV[2]) then return -1 end
local blocks, shares = readBlocks(4)
if ARGV[3] == '1' then keepArchive(KEYS[1], blocks) end
for j = 0, (#KEYS - 1) / ${DESTINATION_KEYS} - 1 do toDestination(2 + ${DESTINATION_KEYS} * j, blocks, shares + ${SHARE_ARGS} * j) end
return 1`);

/** How long a full lane is waited for before looking again. */
const FULL_WAIT_MS = 200;

export interface ImportLaneOptions {
  /** Records a destination's history lane may hold; default HISTORY_CAP_RECORDS. */
  historyCap?: number;
  /** Whether Redis is past its memory budget's high watermark (src/core/redis/memory-budget.ts): the import waits. */
  memoryFull?: () => boolean;
  /** Told each time a step waits, with why. */
  onWait?: (reason: 'history' | 'archive' | 'memory') => void;
}

export class ImportLane implements ImportSink {
  private readonly rules = new RulesCache();

  constructor(
    private readonly redis: RedisClient,
    private readonly keyspace: Keyspace,
    private readonly opts: ImportLaneOptions = {},
  ) {}

  /**
   * Writes one partition's records, waiting as long as the lane is full (`signal` stops the wait).
   * A tracker with neither an archive nor a destination has nowhere to put them: refused by the
   * caller before (importRefusal, src/core/import/importer.ts).
   */
  async write(tracker: Tracker, partition: number, records: StepRecords, signal?: AbortSignal): Promise<void> {
    if (records.texts.length === 0) return;
    const prefix = this.keyspace.prefixOf({ trackerId: tracker.id, partition });
    const at = Date.now();
    const keys = tracker.destinations.flatMap((d) => {
      const k = deliveryKeys(prefix, { trackerId: tracker.id, destinationId: d.id, partition });
      return destinationKeys({ stream: k.history, queued: k.historyQueued, status: k.status, series: k.series }, at);
    });
    const routed = routedBlocks(records, tracker.destinations, this.rules);
    const args = [...blockArgs(routed, (records) => entryFields(records)), ...shareArgs(routed, at)];
    const archive = archiveKeys(prefix, tracker.id, partition).stream;
    for (;;) {
      signal?.throwIfAborted();
      if (this.opts.memoryFull?.()) {
        this.opts.onWait?.('memory');
      } else {
        const answer = await IMPORT_STEP.run(this.redis, 1 + keys.length, archive, ...keys, String(this.opts.historyCap ?? HISTORY_CAP_RECORDS), String(ARCHIVE_BEHIND_MAX), tracker.archiveDays > 0 ? '1' : '0', ...args);
        if (answer === 1) return;
        this.opts.onWait?.(answer === 0 ? 'history' : 'archive');
      }
      await sleep(FULL_WAIT_MS, signal);
    }
  }
}
