import type { RedisClient } from '../../src/core/redis/cluster';
import type { ConnectorError } from '../../connectors/errors';
import type { TrackedRecord } from '../../src/core/records/types';
import { parseExactJson, stringifyExactJson } from '../../src/core/records/exact-json';
import { seriesSlot } from './destination-series';
import { compareStreamIds, ENSURE_COUNT, type DeliveryKeys } from './keys';
import { LuaScript } from '../../src/core/redis/lua-script';

export interface DeadLetter {
  /** Id of the entry in the dead-letter stream. */
  entryId: string;
  record: TrackedRecord;
  error: { kind: string; message: string; status?: number };
  failedAt: string;
}

// Moves entries back to the destination stream and removes them from the dead-letter stream,
// one entry at a time inside one script, so a crash never leaves a record in both or neither.
// KEYS: dead letters, stream, the stream's record count.
const REPLAY = new LuaScript(`${ENSURE_COUNT}
local moved = 0
for i = 1, #ARGV do
  local entry = redis.call('XRANGE', KEYS[1], ARGV[i], ARGV[i])
  if #entry == 1 then
    local fields = entry[1][2]
    -- XDEL before XADD: the first write frees (see "Writes at the limit", src/core/redis/out-of-memory.ts).
    redis.call('XDEL', KEYS[1], ARGV[i])
    if moved == 0 then ensureCount(KEYS[2], KEYS[3]) end
    for j = 1, #fields, 2 do
      if fields[j] == 'r' then
        redis.call('XADD', KEYS[2], '*', 'r', fields[j + 1])
        redis.call('INCRBY', KEYS[3], 1)
      end
    end
    moved = moved + 1
  end
end
return moved`);

/**
 * A dead letter's id: its Redis stream id (`<ms>-<seq>`), with `:p<n>` after it for a tracker
 * partition past 0. Checked before use, so a typo reads as a clear refusal rather than a Redis error.
 */
export function isDeadLetterEntryId(value: string): boolean {
  return /^\d+-\d+(:p[1-9]\d*)?$/.test(value);
}

/** What an operator does with a destination's dead letters, whatever its partitions. */
export interface DeadLetters {
  count(): Promise<number>;
  /** Oldest first; `after` is an entry id to page from (exclusive). */
  list(count?: number, after?: string): Promise<DeadLetter[]>;
  /** Sends entries back for delivery (all when `entryIds` is omitted); reports progress. */
  replay(entryIds?: readonly string[], onProgress?: (done: number, total: number) => void): Promise<number>;
  /** Drops entries for good (all when `entryIds` is omitted). */
  discard(entryIds?: readonly string[], onProgress?: (done: number, total: number) => void): Promise<number>;
}

function fieldsToObject(fields: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) out[fields[i]!] = fields[i + 1]!;
  return out;
}

/** The per-destination store of records a destination refused for good. */
export class DeadLetterStore implements DeadLetters {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Pick<DeliveryKeys, 'deadLetters' | 'stream' | 'queued' | 'series'>,
  ) {}

  async add(items: ReadonlyArray<{ record: TrackedRecord; error: ConnectorError }>, now = new Date()): Promise<void> {
    if (items.length === 0) return;
    const tx = this.redis.multi();
    for (const { record, error } of items) {
      const err = { kind: error.kind, message: error.message, ...(error.details.status !== undefined ? { status: error.details.status } : {}) };
      tx.xadd(this.keys.deadLetters, '*', 'r', stringifyExactJson(record), 'e', JSON.stringify(err), 'at', now.toISOString());
    }
    // Dead-lettered per minute, for the destination's pictures over time (destination-series.ts).
    const slot = seriesSlot(this.keys, 'deadLettered', now.getTime());
    tx.hincrby(slot.key, slot.field, items.length).expireat(slot.key, slot.expiresAt);
    await tx.exec();
  }

  count(): Promise<number> {
    return this.redis.xlen(this.keys.deadLetters);
  }

  /** Oldest first; `after` is an entry id to page from (exclusive). */
  list(count = 100, after?: string): Promise<DeadLetter[]> {
    return this.read(count, after ? `(${after}` : '-');
  }

  /** Oldest first, from `streamId` (inclusive). */
  listFrom(count: number, streamId: string): Promise<DeadLetter[]> {
    return this.read(count, streamId);
  }

  private async read(count: number, start: string): Promise<DeadLetter[]> {
    const entries = await this.redis.xrange(this.keys.deadLetters, start, '+', 'COUNT', count);
    return entries.map(([entryId, fields]) => {
      const f = fieldsToObject(fields);
      return { entryId, record: parseExactJson(f.r ?? '{}') as TrackedRecord, error: JSON.parse(f.e ?? '{}') as DeadLetter['error'], failedAt: f.at ?? '' };
    });
  }

  /** Sends entries back for delivery (all when `entryIds` is omitted), in chunks; reports progress. */
  async replay(entryIds?: readonly string[], onProgress?: (done: number, total: number) => void, chunk = 500): Promise<number> {
    return this.forEachChunk(entryIds, chunk, onProgress, (ids) => REPLAY.run(this.redis, 3, this.keys.deadLetters, this.keys.stream, this.keys.queued, ...ids) as Promise<number>);
  }

  /** Drops entries for good (all when `entryIds` is omitted). */
  async discard(entryIds?: readonly string[], onProgress?: (done: number, total: number) => void, chunk = 500): Promise<number> {
    return this.forEachChunk(entryIds, chunk, onProgress, (ids) => this.redis.xdel(this.keys.deadLetters, ...ids));
  }

  private async forEachChunk(
    entryIds: readonly string[] | undefined,
    chunk: number,
    onProgress: ((done: number, total: number) => void) | undefined,
    apply: (ids: string[]) => Promise<number>,
  ): Promise<number> {
    let done = 0;
    if (entryIds) {
      for (let i = 0; i < entryIds.length; i += chunk) {
        done += await apply(entryIds.slice(i, i + chunk));
        onProgress?.(done, entryIds.length);
      }
      return done;
    }
    // "All" means all that are there now: records that fail again during a replay wait for the next one.
    const newest = await this.redis.xrevrange(this.keys.deadLetters, '+', '-', 'COUNT', 1);
    const last = newest[0]?.[0];
    if (last === undefined) return 0;
    const total = await this.count();
    for (;;) {
      const page = await this.redis.xrange(this.keys.deadLetters, '-', last, 'COUNT', chunk);
      if (page.length === 0) break;
      done += await apply(page.map(([id]) => id));
      onProgress?.(done, total);
    }
    return done;
  }
}

/** A partition's dead-letter id: the stream id, and the partition past 0. */
function splitEntryId(id: string): { streamId: string; partition: number } {
  const at = id.indexOf(':p');
  return at < 0 ? { streamId: id, partition: 0 } : { streamId: id.slice(0, at), partition: Number(id.slice(at + 2)) };
}

const joinEntryId = (streamId: string, partition: number) => (partition === 0 ? streamId : `${streamId}:p${partition}`);

/**
 * The dead letters of a destination of a partitioned tracker, one store per partition, seen as one:
 * listed in (time, partition) order, with each entry id naming its partition (`<ms>-<seq>:p<n>`).
 */
export class PartitionedDeadLetters implements DeadLetters {
  constructor(private readonly stores: readonly DeadLetterStore[]) {}

  async count(): Promise<number> {
    return (await Promise.all(this.stores.map((s) => s.count()))).reduce((a, b) => a + b, 0);
  }

  async list(count = 100, after?: string): Promise<DeadLetter[]> {
    const from = after === undefined ? undefined : splitEntryId(after);
    const pages = await Promise.all(
      this.stores.map(async (store, partition) => {
        // Past `after` in (time, partition) order: the same time counts only in a later partition.
        const page = from === undefined ? await store.list(count) : partition > from.partition ? await store.listFrom(count, from.streamId) : await store.list(count, from.streamId);
        return page.map((letter) => ({ letter, partition }));
      }),
    );
    return pages
      .flat()
      .sort((a, b) => compareStreamIds(a.letter.entryId, b.letter.entryId) || a.partition - b.partition)
      .slice(0, count)
      .map(({ letter, partition }) => ({ ...letter, entryId: joinEntryId(letter.entryId, partition) }));
  }

  replay(entryIds?: readonly string[], onProgress?: (done: number, total: number) => void): Promise<number> {
    return this.each(entryIds, onProgress, (store, ids, progress) => store.replay(ids, progress));
  }

  discard(entryIds?: readonly string[], onProgress?: (done: number, total: number) => void): Promise<number> {
    return this.each(entryIds, onProgress, (store, ids, progress) => store.discard(ids, progress));
  }

  /** Applies `move` partition by partition, with the progress of all of them together. */
  private async each(
    entryIds: readonly string[] | undefined,
    onProgress: ((done: number, total: number) => void) | undefined,
    move: (store: DeadLetterStore, ids: string[] | undefined, progress: (done: number) => void) => Promise<number>,
  ): Promise<number> {
    const byPartition = new Map<number, string[]>();
    for (const id of entryIds ?? []) {
      const { streamId, partition } = splitEntryId(id);
      byPartition.set(partition, [...(byPartition.get(partition) ?? []), streamId]);
    }
    const total = entryIds ? entryIds.length : await this.count();
    let done = 0;
    for (const [partition, store] of this.stores.entries()) {
      const ids = entryIds ? byPartition.get(partition) : undefined;
      if (entryIds && !ids) continue;
      const before = done;
      done = before + (await move(store, ids, (n) => onProgress?.(before + n, total)));
      onProgress?.(done, total);
    }
    return done;
  }
}
