import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../../src/core/redis/cluster';
import type { Keyspace } from '../../src/core/redis/keyspace';
import type { Logger } from '../../src/core/logger';
import { parseExactJson } from '../../src/core/records/exact-json';
import type { TrackedRecord } from '../../src/core/records/types';
import { RulesCache } from '../../src/core/rules/compile';
import type { Destination, Tracker } from '../../src/core/trackers/types';
import type { ArchiveFiles } from './archive-files';
import { routedBlocks } from '../routing/destination-blocks';
import type { FramedEntry } from '../spill/frames';
import { archiveKeys, compareStreamIds, partitionDeliveryKeys, streamIdTime, type DeliveryKeys } from '../delivery/keys';
import { appendMergedStates } from './backfill-upserts';
import { entryFields, recordCountOf } from '../routing/stream-entries';
import { LuaScript } from '../../src/core/redis/lua-script';

/**
 * Backfills: a destination receives the archived records of a time range again, through its rules
 * as they are now, in a lane of its own (the destination's history stream), which its delivery
 * loop reads only while nothing live waits. Each tracker partition's backfill is moved, a chunk at a
 * time, from the archive files to the history stream by the worker that holds the partition's
 * archive (jobs/history/archiver.ts), which saves its position with each chunk in the same atomic step: a
 * worker killed mid-backfill leaves it where the last chunk ended, and the next holder goes on from
 * there. Events are written as re-sends, so that a destination that has some of them (a later
 * backfill of the same days, live records since it was added) keeps one of each. Users and
 * sessions go first, each key once as its merged state, in order with its live updates
 * (jobs/history/backfill-upserts.ts).
 */

export const BACKFILL_RESOURCES = ['events', 'users', 'sessions'] as const;
export type BackfillResource = (typeof BACKFILL_RESOURCES)[number];
/**
 * What a backfill sends when not told: all three. A warehouse connected after the fact needs its
 * users and sessions as much as its events; sending only events left their tables empty.
 */
export const DEFAULT_BACKFILL_RESOURCES: readonly BackfillResource[] = BACKFILL_RESOURCES;

const KIND_OF: Readonly<Record<BackfillResource, TrackedRecord['kind']>> = { events: 'event', users: 'user', sessions: 'session' };

export type BackfillState = 'running' | 'done' | 'cancelled';

/** One destination partition's backfill, as its hash holds it. */
export interface BackfillProgress {
  id: string;
  state: BackfillState;
  /** The time range of `_received_at`, ISO 8601. */
  since: string;
  until: string;
  resources: BackfillResource[];
  startedAt: string;
  finishedAt: string | null;
  /** Archived records read so far. */
  read: number;
  /** When the last record read was routed (ms); null before the first. How far the reading has come. */
  readThrough: number | null;
  /** Of those, sent to the destination's history lane (the others: outside the range or the resources, or kept out by its rules). */
  queued: number;
  /** Users and sessions sent as their merged state (jobs/history/backfill-upserts.ts). */
  states: number;
}

/** Records moved per step: one read of the archive, one Redis call. */
const CHUNK_RECORDS = 2000;
/**
 * Records a destination's history lane holds at most: past it the backfill waits for delivery to
 * catch up. Twice the largest history batch a connector takes (BigQuery's load chunk of 20 000),
 * so that the next chunk is queued while one is written.
 */
export const HISTORY_CAP_RECORDS = 40_000;
/**
 * Archive ids are the routing time, never before `_received_at` but for clock skew between the API
 * hosts and Redis: a range is read from this much before its start.
 */
const SKEW_MS = 5 * 60_000;
/**
 * A tracker partition's records are routed (so archived) in the order they were accepted: once a
 * record received this long after the range's end is read, every record of the range was read.
 * The margin covers the group commit and API hosts' clocks that disagree a little. A range that
 * ends now therefore finishes this long after it ends.
 */
export const DEFAULT_BACKFILL_END_MARGIN_MS = 10_000;

/**
 * Appends a chunk to the history stream and moves the position, if the backfill is still the one
 * read, running, and where it was read. KEYS: backfill hash, history stream, history count.
 * ARGV: backfill id, position as read, new position, records read, records queued, then the
 * entry's fields (none when nothing was queued). 1: moved; 0: the backfill changed meanwhile.
 */
const STEP = new LuaScript(`
if redis.call('HGET', KEYS[1], 'id') ~= ARGV[1] or redis.call('HGET', KEYS[1], 'state') ~= 'running' then return 0 end
if (redis.call('HGET', KEYS[1], 'position') or '') ~= ARGV[2] then return 0 end
local queued = tonumber(ARGV[5])
if queued > 0 then
  redis.call('XADD', KEYS[2], '*', unpack(ARGV, 6, #ARGV))
  redis.call('INCRBY', KEYS[3], queued)
end
redis.call('HSET', KEYS[1], 'position', ARGV[3])
redis.call('HINCRBY', KEYS[1], 'read', ARGV[4])
redis.call('HINCRBY', KEYS[1], 'queued', ARGV[5])
return 1`);

/** Marks a backfill done, if it is still the one read and running. KEYS: backfill hash. ARGV: id, time. */
const FINISH = new LuaScript(`
if redis.call('HGET', KEYS[1], 'id') ~= ARGV[1] or redis.call('HGET', KEYS[1], 'state') ~= 'running' then return 0 end
redis.call('HSET', KEYS[1], 'state', 'done', 'finishedAt', ARGV[2])
return 1`);

export class BackfillError extends Error {
  override name = 'BackfillError';
}

export function readProgress(hash: Record<string, string>): BackfillProgress | undefined {
  if (!hash.id) return undefined;
  return {
    id: hash.id,
    state: hash.state as BackfillState,
    since: hash.since ?? '',
    until: hash.until ?? '',
    resources: (hash.resources ?? '').split(',').filter(Boolean) as BackfillResource[],
    startedAt: hash.startedAt ?? '',
    finishedAt: hash.finishedAt || null,
    read: Number(hash.read ?? 0),
    readThrough: hash.position ? streamIdTime(hash.position) : null,
    queued: Number(hash.queued ?? 0),
    states: Number(hash.upserts ?? 0),
  };
}

/**
 * Starts a backfill of one destination in every partition of its tracker. One at a time: a
 * running backfill must be waited for or cancelled first. Returns its id.
 */
export async function startBackfill(redis: RedisClient, keyspace: Keyspace, tracker: Tracker, destinationId: string, range: { since: Date; until: Date; resources: readonly BackfillResource[] }): Promise<string> {
  if (!(range.since < range.until)) throw new BackfillError(`the range is empty: --since ${range.since.toISOString()} is not before --until ${range.until.toISOString()}`);
  if (tracker.archiveDays <= 0) throw new BackfillError(`tracker ${tracker.id} keeps no archive (archiveDays 0): there is no history to send`);
  const keys = partitionKeys(keyspace, tracker, destinationId);
  for (const k of keys) {
    const running = readProgress(await redis.hgetall(k.backfill));
    if (running?.state === 'running') throw new BackfillError(`a backfill of ${destinationId} is under way (${running.since} to ${running.until}, ${running.read} records read): wait for it, or cancel it first`);
  }
  const id = randomUUID();
  const fields = { id, state: 'running', since: range.since.toISOString(), until: range.until.toISOString(), resources: range.resources.join(','), startedAt: new Date().toISOString(), finishedAt: '', position: '', read: '0', queued: '0', upserts: '0' };
  for (const k of keys) {
    await redis.del(k.backfill);
    await redis.hset(k.backfill, fields);
  }
  return id;
}

/** Cancels the running backfill of a destination; what was queued in its history lane is still delivered. Returns whether one ran. */
export async function cancelBackfill(redis: RedisClient, keyspace: Keyspace, tracker: Tracker, destinationId: string): Promise<boolean> {
  let cancelled = false;
  for (const k of partitionKeys(keyspace, tracker, destinationId)) {
    if ((await redis.hget(k.backfill, 'state')) !== 'running') continue;
    await redis.hset(k.backfill, 'state', 'cancelled', 'finishedAt', new Date().toISOString());
    cancelled = true;
  }
  return cancelled;
}

/** A destination's backfill over its tracker's partitions, and what its history lane still holds; undefined when it never had one. */
export async function backfillProgress(redis: RedisClient, keyspace: Keyspace, tracker: Tracker, destinationId: string): Promise<(BackfillProgress & { waiting: number }) | undefined> {
  const parts = await Promise.all(
    partitionKeys(keyspace, tracker, destinationId).map(async (k) => ({ progress: readProgress(await redis.hgetall(k.backfill)), waiting: Number((await redis.get(k.historyQueued)) ?? 0) })),
  );
  const first = parts[0]?.progress;
  if (!first) return undefined;
  const all = parts.map((p) => p.progress).filter((p): p is BackfillProgress => p !== undefined && p.id === first.id);
  const state: BackfillState = all.some((p) => p.state === 'running') ? 'running' : all.some((p) => p.state === 'cancelled') ? 'cancelled' : 'done';
  const finished = all.map((p) => p.finishedAt).filter((f): f is string => f !== null).sort();
  return {
    ...first,
    state,
    finishedAt: state === 'running' ? null : (finished.at(-1) ?? null),
    read: all.reduce((n, p) => n + p.read, 0),
    // The partition furthest behind says how far the backfill has come.
    readThrough: all.some((p) => p.readThrough === null) ? null : Math.min(...all.map((p) => p.readThrough!)),
    queued: all.reduce((n, p) => n + p.queued, 0),
    states: all.reduce((n, p) => n + p.states, 0),
    waiting: parts.reduce((n, p) => n + p.waiting, 0),
  };
}

function partitionKeys(keyspace: Keyspace, tracker: Pick<Tracker, 'id' | 'partitions'>, destinationId: string): DeliveryKeys[] {
  return Array.from({ length: tracker.partitions }, (_, partition) => partitionDeliveryKeys(keyspace, { trackerId: tracker.id, destinationId, partition }));
}

/**
 * Moves the backfills of one tracker partition along, from the archive files this process holds
 * to each destination's history lane. Run by the partition's archiver after each round.
 */
/** Where a backfill's reading stands in this process: the frames ahead of its position, read once. */
interface Reader {
  backfillId: string;
  position: string;
  frames: AsyncGenerator<FramedEntry[]>;
  pending: FramedEntry[];
}

export class Backfiller {
  private readonly rules = new RulesCache();
  private readonly readers = new Map<string, Reader>();

  constructor(
    private readonly redis: RedisClient,
    private readonly keyspace: Keyspace,
    private readonly files: ArchiveFiles,
    private readonly ref: { trackerId: string; partition: number },
    private readonly logger: Logger,
    /** Whether every record accepted for this partition has been routed and archived (nothing more of the range can come). */
    private readonly caughtUp: () => Promise<boolean>,
    private readonly endMarginMs = DEFAULT_BACKFILL_END_MARGIN_MS,
  ) {}

  /** One chunk for each destination whose backfill runs; returns whether any moved. */
  async step(tracker: Tracker | undefined): Promise<boolean> {
    let moved = false;
    for (const destination of tracker?.destinations ?? []) {
      const keys = partitionDeliveryKeys(this.keyspace, { ...this.ref, destinationId: destination.id });
      const hash = await this.redis.hgetall(keys.backfill);
      const progress = readProgress(hash);
      if (progress?.state !== 'running') {
        this.readers.delete(destination.id);
        continue;
      }
      const upserts = progress.resources.filter((r) => r !== 'events');
      if (upserts.length > 0 && hash.upsertsDone !== '1') {
        // Users and sessions first, as merged states in the live stream; then the events' chunks.
        const states = await appendMergedStates(this.redis, this.files, archiveKeys(this.keyspace.prefixOf(this.ref), this.ref.trackerId, this.ref.partition), destination, keys, this.rules, {
          backfillId: progress.id,
          since: Date.parse(progress.since),
          kinds: new Set(upserts.map((r) => KIND_OF[r])),
        }, `${Math.max(0, Date.parse(progress.since) - SKEW_MS)}-0`);
        if (states !== undefined) this.logger.info({ destinationId: destination.id, states }, 'backfill: users and sessions queued as their merged state');
        if (states !== undefined && !progress.resources.includes('events')) await this.finish(destination, keys, progress);
        moved = moved || states !== undefined;
        continue;
      }
      if (!progress.resources.includes('events')) continue;
      if (Number((await this.redis.get(keys.historyQueued)) ?? 0) >= HISTORY_CAP_RECORDS) continue;
      moved = (await this.chunk(destination, keys, progress, hash.position ?? '')) || moved;
    }
    return moved;
  }

  /**
   * The next records after `position`, at most CHUNK_RECORDS. The frames are read on from where the
   * last chunk stopped; a reader is started again (from the position Redis holds) when there is
   * none, it belongs to another backfill, or it ran out of frames (the archive may have grown).
   */
  private async next(destinationId: string, progress: BackfillProgress, position: string): Promise<FramedEntry[]> {
    let reader = this.readers.get(destinationId);
    if (!reader || reader.backfillId !== progress.id || reader.position !== position) {
      const start = position || `${Math.max(0, Date.parse(progress.since) - SKEW_MS)}-0`;
      reader = { backfillId: progress.id, position, frames: this.files.read(start), pending: [] };
      this.readers.set(destinationId, reader);
    }
    const out: FramedEntry[] = [];
    while (out.length < CHUNK_RECORDS) {
      if (reader.pending.length === 0) {
        const frame = await reader.frames.next();
        if (frame.done) {
          this.readers.delete(destinationId);
          break;
        }
        reader.pending = position ? frame.value.filter((e) => compareStreamIds(e.id, position) > 0) : frame.value;
        continue;
      }
      out.push(...reader.pending.splice(0, CHUNK_RECORDS - out.length));
    }
    return out;
  }

  /** Reads the next chunk after `position` and queues what the range, the resources and the rules let through. */
  private async chunk(destination: Destination, keys: DeliveryKeys, progress: BackfillProgress, position: string): Promise<boolean> {
    const since = Date.parse(progress.since);
    const until = Date.parse(progress.until);
    // Users and sessions went as merged states (appendMergedStates): the chunks carry events.
    const kinds = new Set<TrackedRecord['kind']>(['event']);
    const entries = await this.next(destination.id, progress, position);
    if (entries.length === 0) {
      // Everything archived is read: done once nothing of the range can still come (accepted, not yet routed or archived).
      if (Date.now() > until + this.endMarginMs && (await this.caughtUp())) await this.finish(destination, keys, progress);
      return false;
    }
    const texts: string[] = [];
    const values: TrackedRecord[] = [];
    let read = 0;
    let past = false;
    for (const entry of entries) {
      read++;
      const record = parseExactJson(entry.json) as TrackedRecord;
      const at = Date.parse(record.receivedAt);
      if (at > until + this.endMarginMs) {
        past = true;
        break;
      }
      if (!kinds.has(record.kind) || at < since || at > until) continue;
      texts.push(entry.json);
      values.push(record);
    }
    const routed = routedBlocks({ texts, values: () => values }, [destination], this.rules);
    const block = routed.blocks[routed.shares[0]!.block]!;
    const count = recordCountOf(block);
    const last = entries[read - 1]!.id;
    const stepped = await STEP.run(this.redis, 3, keys.backfill, keys.history, keys.historyQueued, progress.id, position, last, read, count, ...(count > 0 ? entryFields(block) : []));
    const reader = this.readers.get(destination.id);
    if (stepped === 1 && reader && !past) reader.position = last;
    else this.readers.delete(destination.id);
    if (stepped === 1 && past) await this.finish(destination, keys, progress);
    return stepped === 1;
  }

  private async finish(destination: Destination, keys: DeliveryKeys, progress: BackfillProgress): Promise<void> {
    this.readers.delete(destination.id);
    if ((await FINISH.run(this.redis, 1, keys.backfill, progress.id, new Date().toISOString())) === 1) this.logger.info({ destinationId: destination.id }, 'backfill read');
  }
}
