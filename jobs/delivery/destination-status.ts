import type { RedisClient } from '../../src/core/redis/cluster';
import type { ConnectorError } from '../../connectors/errors';
import type { DestinationDetails } from '../../connectors/types';
import { DestinationSeries } from './destination-series';
import { streamIdTime, type DeliveryKeys } from './keys';
import { entryQueuedSince, rangeStartAfter } from '../routing/stream-entries';
import type { SpoolBacklog } from '../spill/spool';
import { LuaScript } from '../../src/core/redis/lua-script';

// Sets fields of the status hash. HDEL of the same fields first: the hash keeps a fixed set of
// small fields, so this runs on a full Redis (see "Writes at the limit", src/core/redis/out-of-memory.ts)
// and delivery can go on draining it. ARGV: field, value, field, value…
const SET_FIELDS = new LuaScript(`
for i = 1, #ARGV, 2 do redis.call('HDEL', KEYS[1], ARGV[i]) end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1`);

/** What an operator sees of one destination. */
export interface DestinationStatus {
  /** Records accepted but not yet confirmed by the destination, in Redis and on disk. */
  queued: number;
  /** Of those, the ones in Redis. */
  inRedis: number;
  /** Of those, the ones in the disk spool of the worker that holds the destination (jobs/spill/spool.ts). */
  spooled: number;
  /** Bytes of the spool's undelivered frames, compressed. */
  spoolBytes: number;
  /** Records a second the backlog grows by, about the last minute (negative: it shrinks). */
  growthPerSecond: number;
  /**
   * At that rate, seconds until the destination's Redis cap is reached (from then on it spills to
   * disk) and until the holder's disk is full; null when the backlog is not growing.
   */
  fullInSeconds: { redisCap: number | null; disk: number | null };
  /** Records in the batch being written right now (by whichever process leads). */
  inFlight: number;
  delivered: number;
  /** Batches confirmed by the destination: delivered / batches is the records per destination write. */
  batches: number;
  /** Records in the dead-letter store. */
  deadLettered: number;
  /** Records its rules kept from it (jobs/routing/destination-blocks.ts): its filter was false, they fell outside its sample, or its filter could not be evaluated on them. */
  skipped: { filter: number; sample: number; filterErrors: number };
  /** Why the filter last failed on a record (e.g. `Unknown variable: total`); null when it never has. */
  lastFilterError: string | null;
  /** Age of the oldest record not yet delivered, in milliseconds (0 when none). */
  lagMs: number;
  lastDeliveredAt: string | null;
  lastError: { kind: string; message: string; at: string } | null;
  /** Set while delivery waits for the settings or the access to be fixed. */
  paused: string | null;
  /** When the write of the batch in flight began (its first attempt); null when idle. */
  writingSince: string | null;
  /** Failed attempts at the batch in flight so far. */
  attempts: number;
  /** When the batch in flight is tried again, while it waits to be. */
  retryAt: string | null;
  /** What the connector last reported about the destination (e.g. a spreadsheet's cells used). */
  details: DestinationDetails | null;
}

/** Writes and reads the status hash of a destination. */
export class DestinationStatusStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: DeliveryKeys,
  ) {}

  /** Records a failed write, and when the batch will be tried again (the `attempts`-th failure). */
  async recordError(error: ConnectorError, at = new Date(), retry?: { attempts: number; at: Date }): Promise<void> {
    const fields: Record<string, string> = { lastError: JSON.stringify({ kind: error.kind, message: error.message, at: at.toISOString() }) };
    if (retry) {
      fields.attempts = String(retry.attempts);
      fields.retryAt = retry.at.toISOString();
    }
    if (error.kind === 'configuration') fields.paused = error.message;
    await this.set(fields);
    // The moment it paused or began failing, once (a batch dead-lettered whole is counted per minute instead).
    if (error.kind !== 'permanent') await new DestinationSeries(this.redis, this.keys).mark(error.kind === 'configuration' ? 'paused' : 'failing', { at, message: error.message });
  }

  /** How fast the backlog grows and what room is left (written by the spiller, see Spiller.reportGrowth). */
  async setRoom(room: { growthPerSecond: number; capRecords: number; diskFreeBytes: number; diskBytesPerRecord: number }): Promise<void> {
    await this.redis.hset(this.keys.status, 'growthPerSecond', room.growthPerSecond.toFixed(3), 'capRecords', String(room.capRecords), 'diskFreeBytes', String(room.diskFreeBytes), 'diskBytesPerRecord', room.diskBytesPerRecord.toFixed(1));
  }

  /** What the holder's disk spool holds past the cursor (jobs/spill/spool.ts). */
  async setSpool(backlog: SpoolBacklog): Promise<void> {
    await this.redis.hset(this.keys.status, 'spooled', String(backlog.records), 'spoolBytes', String(backlog.bytes), 'spoolOldestId', backlog.oldestId ?? '');
  }

  async setDetails(details: DestinationDetails): Promise<void> {
    await this.set({ details: JSON.stringify(details) });
  }

  /**
   * A batch of `count` records goes out. `sentThrough` is the highest stream id ever handed to the
   * destination: a later holder treats records up to it as possibly written (see WriteOptions);
   * null leaves it as it is (a history batch, always sent as a re-send).
   */
  async startBatch(count: number, sentThrough: string | null, at = new Date()): Promise<void> {
    await this.set({ inFlight: String(count), ...(sentThrough === null ? {} : { sentThrough }), writingSince: at.toISOString(), attempts: '0', retryAt: '' });
  }

  private async set(fields: Record<string, string>): Promise<void> {
    await SET_FIELDS.run(this.redis, 1, this.keys.status, ...Object.entries(fields).flat());
  }

  /** The highest stream id ever handed to the destination, if any. */
  async sentThrough(): Promise<string | null> {
    return this.redis.hget(this.keys.status, 'sentThrough');
  }

  async read(now = Date.now()): Promise<DestinationStatus> {
    const [hash, length, count, deadLettered, cursor] = await Promise.all([
      this.redis.hgetall(this.keys.status),
      this.redis.xlen(this.keys.stream),
      this.redis.get(this.keys.queued),
      this.redis.xlen(this.keys.deadLetters),
      this.redis.get(this.keys.cursor),
    ]);
    // A stream from before record counts were kept holds one record an entry.
    const queued = count === null ? length : Number(count);
    const oldest = await this.redis.xrange(this.keys.stream, cursor ? rangeStartAfter(cursor) : '-', '+', 'COUNT', 1);
    const spooled = Number(hash.spooled ?? 0);
    const first = oldest[0];
    const oldestAt = spooled > 0 && hash.spoolOldestId ? streamIdTime(hash.spoolOldestId) : first ? entryQueuedSince(first[0], first[1]) : undefined;
    return {
      queued: Math.max(0, queued) + spooled,
      inRedis: Math.max(0, queued),
      spooled,
      spoolBytes: Number(hash.spoolBytes ?? 0),
      growthPerSecond: Number(hash.growthPerSecond ?? 0),
      fullInSeconds: fullIn(hash, queued),
      inFlight: Number(hash.inFlight ?? 0),
      delivered: Number(hash.delivered ?? 0),
      batches: Number(hash.batches ?? 0),
      deadLettered,
      skipped: { filter: Number(hash.filtered ?? 0), sample: Number(hash.sampled ?? 0), filterErrors: Number(hash.filterErrors ?? 0) },
      lastFilterError: hash.lastFilterError || null,
      lagMs: oldestAt === undefined ? 0 : Math.max(0, now - oldestAt),
      lastDeliveredAt: hash.lastDeliveredAt ?? null,
      lastError: hash.lastError ? (JSON.parse(hash.lastError) as DestinationStatus['lastError']) : null,
      paused: hash.paused || null,
      writingSince: hash.writingSince || null,
      attempts: Number(hash.attempts ?? 0),
      retryAt: hash.retryAt || null,
      details: hash.details ? (JSON.parse(hash.details) as DestinationDetails) : null,
    };
  }
}

/** Seconds until the Redis cap and the disk are reached at the current growth; null when not growing. */
function fullIn(hash: Record<string, string>, inRedis: number): DestinationStatus['fullInSeconds'] {
  const growth = Number(hash.growthPerSecond ?? 0);
  // Below a record a minute the backlog is not really growing.
  if (!(growth > 1 / 60)) return { redisCap: null, disk: null };
  const cap = Number(hash.capRecords ?? 0);
  const free = Number(hash.diskFreeBytes ?? 0);
  const perRecord = Number(hash.diskBytesPerRecord ?? 0);
  return {
    redisCap: cap > 0 ? Math.max(0, Math.round((cap - inRedis) / growth)) : null,
    disk: free > 0 && perRecord > 0 ? Math.round(free / perRecord / growth) : null,
  };
}

const earliest = (values: Array<string | null>) => values.filter((v): v is string => v !== null).sort()[0] ?? null;
const latest = (values: Array<string | null>) => values.filter((v): v is string => v !== null).sort().at(-1) ?? null;
const soonest = (values: Array<number | null>) => {
  const known = values.filter((v): v is number => v !== null);
  return known.length === 0 ? null : Math.min(...known);
};

/**
 * One destination's status over the partitions of its tracker: counts add up, the lag is the
 * oldest partition's, the last error and delivery the latest, and a pause in any partition shows.
 */
export function combineStatuses(parts: readonly DestinationStatus[]): DestinationStatus {
  if (parts.length === 1) return parts[0]!;
  const sum = (pick: (s: DestinationStatus) => number) => parts.reduce((n, s) => n + pick(s), 0);
  const lastError = parts.map((s) => s.lastError).filter((e) => e !== null).sort((a, b) => a.at.localeCompare(b.at)).at(-1) ?? null;
  return {
    queued: sum((s) => s.queued),
    inRedis: sum((s) => s.inRedis),
    spooled: sum((s) => s.spooled),
    spoolBytes: sum((s) => s.spoolBytes),
    growthPerSecond: sum((s) => s.growthPerSecond),
    fullInSeconds: { redisCap: soonest(parts.map((s) => s.fullInSeconds.redisCap)), disk: soonest(parts.map((s) => s.fullInSeconds.disk)) },
    inFlight: sum((s) => s.inFlight),
    delivered: sum((s) => s.delivered),
    batches: sum((s) => s.batches),
    deadLettered: sum((s) => s.deadLettered),
    skipped: { filter: sum((s) => s.skipped.filter), sample: sum((s) => s.skipped.sample), filterErrors: sum((s) => s.skipped.filterErrors) },
    lastFilterError: parts.find((s) => s.lastFilterError !== null)?.lastFilterError ?? null,
    lagMs: Math.max(...parts.map((s) => s.lagMs)),
    lastDeliveredAt: latest(parts.map((s) => s.lastDeliveredAt)),
    lastError,
    paused: parts.find((s) => s.paused !== null)?.paused ?? null,
    writingSince: earliest(parts.map((s) => s.writingSince)),
    attempts: Math.max(...parts.map((s) => s.attempts)),
    retryAt: earliest(parts.map((s) => s.retryAt)),
    details: parts.find((s) => s.details !== null)?.details ?? null,
  };
}
