import type { RedisClient } from '../../src/core/redis/cluster';
import { ConnectorError, RetryableError } from '../../connectors/errors';
import type { BatchLimits, DestinationWriter, RecordOutcome, WriteOptions } from '../../connectors/types';
import type { Logger } from '../../src/core/logger';
import type { TrackedRecord } from '../../src/core/records/types';
import { parseExactJson } from '../../src/core/records/exact-json';
import { linkedController, withDeadline } from '../../src/core/deadline';
import { sleep } from '../../src/core/sleep';
import { isOutOfMemoryError, OUT_OF_MEMORY_LOG } from '../../src/core/redis/out-of-memory';
import { backoffDelay, type BackoffPolicy } from './backoff';
import { DeadLetterStore } from './dead-letters';
import { DestinationStatusStore } from './destination-status';
import { CONFIRM_SERIES, MAX_MARKERS, seriesSlot } from './destination-series';
import { compareStreamIds, entryIdOf, nextStreamId, streamIdTime, type DeliveryKeys } from './keys';
import { rangeStartAfter, recordsAfter, type StreamRecord } from '../routing/stream-entries';
import { StreamReadTurns } from './read-turns';
import type { Spool } from '../spill/spool';
import type { LeaderLock } from './leader-lock';
import { LuaScript } from '../../src/core/redis/lua-script';

/**
 * Moves the cursor past a delivered batch, if this process still holds the lease, and counts it in
 * the destination's pictures over time. Confirming the same batch again changes nothing: ioredis
 * re-sends a command whose answer was lost when the connection dropped, and Redis may have run it already.
 * KEYS: lock, cursor, stream, status, record count, series bucket, markers. ARGV: lease token, id
 * of the batch's last record, the entry id below which the stream is trimmed, records in the
 * batch, delivery time, how many of them the record count still holds (not those read from the
 * disk spool), the bucket's field, its expiry, the markers' cap, how many of them the destination
 * took (the others were dead-lettered).
 */
const CONFIRM = new LuaScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if redis.call('GET', KEYS[2]) == ARGV[2] then return 1 end
-- XTRIM first: it frees, so a full Redis still takes the confirm (see "Writes at the limit", src/core/redis/out-of-memory.ts).
redis.call('XTRIM', KEYS[3], 'MINID', ARGV[3])
redis.call('SET', KEYS[2], ARGV[2])
if redis.call('EXISTS', KEYS[5]) == 0 then
  -- A stream from before record counts holds one record an entry; the delivered ones are gone now.
  redis.call('SET', KEYS[5], redis.call('XLEN', KEYS[3]))
elseif tonumber(ARGV[6]) > 0 then
  redis.call('DECRBY', KEYS[5], ARGV[6])
end
redis.call('HINCRBY', KEYS[4], 'delivered', ARGV[4])
redis.call('HINCRBY', KEYS[4], 'batches', 1)
redis.call('HSET', KEYS[4], 'lastDeliveredAt', ARGV[5], 'inFlight', '0', 'paused', '', 'writingSince', '', 'attempts', '0', 'retryAt', '')
${CONFIRM_SERIES}
return 1`);

export interface DeliveryLoopOptions {
  batch: BatchLimits;
  /** Records of a history batch at most (the connector's `historyBatchRecords`). Default HISTORY_BATCH_RECORDS. */
  historyBatchRecords?: number;
  /**
   * True while history should wait whatever the destination's own lane: in `npm start`, while the
   * API's event loop is delayed (src/core/loop-delay.ts), so that history's CPU is not taken from
   * live requests. Live records never wait for it.
   */
  historyHeldBack?: () => boolean;
  backoff: BackoffPolicy;
  /** A record answered `retry` this many times in a row is dead-lettered. Default 10. */
  maxRecordAttempts: number;
  /** While paused on a configuration error, the settings are tried again this often. Default 30 s. */
  configRecheckMs: number;
  /** Longest single wait on the stream, so that stopping is noticed quickly. Default 1000 ms. */
  pollMs: number;
  /**
   * A write still unfinished after this long is abandoned (its signal aborts) and retried with
   * backoff; the write is idempotent, so a late landing is harmless. Default 10 minutes.
   */
  writeTimeoutMs: number;
}

export const DEFAULT_DELIVERY_OPTIONS: Omit<DeliveryLoopOptions, 'batch'> = {
  backoff: { baseMs: 500, maxMs: 60_000 },
  maxRecordAttempts: 10,
  configRecheckMs: 30_000,
  pollMs: 1000,
  writeTimeoutMs: 600_000,
};

/** Entries read by the first XRANGE of a batch; later pages are sized by the records per entry seen. */
const FIRST_PAGE_ENTRIES = 32;

/** How long a stopping loop lets the write in hand finish before it gives the batch back. */
const STOP_GRACE_MS = 5000;

/**
 * A write that was abandoned and did not stop when told to: the writer may be in any state, so the
 * loop ends and the supervisor opens a fresh one.
 */
class WedgedWriterError extends Error {
  override name = 'WedgedWriterError';
}

/** Resolves true once `p` settles, or false after `ms` or when `signal` aborts. */
async function settlesWithin(p: Promise<unknown>, ms: number, signal?: AbortSignal): Promise<boolean> {
  const settled = p.then(
    () => true,
    () => true,
  );
  return Promise.race([settled, sleep(ms, signal).then(() => false, () => false)]);
}

/** Live records (the spool, the stream), or history a backfill sent (jobs/history/backfill.ts). */
type Lane = 'live' | 'history';

/**
 * Records of a history batch at most: a live record that arrives while one is written waits for
 * it, and in one process with the API (`npm start`) so does every request while the batch is
 * decoded and mapped on the event loop. With 1 000, an import raised the live p99 latency from 8 to
 * 62 ms (`npm run bench`, bench/RESULTS.md); with 250, to 27–48 ms.
 */
export const HISTORY_BATCH_RECORDS = 250;

/** Reads a batch under way takes at most before its age is up (the connector's maxAgeMs), each after a step of that share of it. */
const GATHER_STEPS = 8;
const MIN_GATHER_STEP_MS = 5;

/**
 * Characters of record JSON a history batch holds at most, whatever its records' count: 20 000
 * webhook payloads of tens of KB each would otherwise be gigabytes in the worker. Typical events
 * (hundreds of bytes) fill a batch of 20 000 long before this.
 */
export const HISTORY_BATCH_CHARS = 32 * 1024 * 1024;

/**
 * A large history batch (a connector's `historyBatchRecords`) is decoded this many records at a
 * time, with a turn of the event loop between: in one process with the API, 10 000 records decoded
 * at once would hold every request for tens of milliseconds.
 */
const DECODE_SLICE = 500;

/**
 * After a history batch during which live records arrived, the lane rests for the batch's time
 * times this: history then takes at most two thirds of the destination's delivery time (and of the
 * event loop it shares), so that live traffic keeps its pace beside an import of a year. With no
 * live record waiting, history goes on at once. Measured with `npm run bench` (bench/RESULTS.md):
 * resting kept the live delivery lag's p99 within 4 % of the run without an import; without it,
 * +54 %.
 */
const HISTORY_REST_FACTOR = 0.5;

/** History that has waited this long for the API (historyHeldBack) sends one batch, then waits again. */
const HISTORY_MAX_HOLD_MS = 5000;

interface Entry {
  /** The record's id in the stream (stream-entries.ts). */
  id: string;
  record: TrackedRecord;
  attempts: number;
  /** Read from the stream and the last record of its entry: the entry can go once it is delivered. */
  endsEntry: boolean;
}

/** A record read for a batch; one from the disk spool never ends a stream entry. */
function toEntry({ id, json }: { id: string; json: string }, endsEntry: boolean): Entry {
  return { id, record: parseExactJson(json) as TrackedRecord, attempts: 0, endsEntry };
}

/**
 * The first records whose JSON stays within `max` characters (one at least). Cutting inside a
 * stream entry is safe: the last record kept says whether its entry ends (confirm keeps the rest).
 */
export function withinChars(records: readonly StreamRecord[], max: number): readonly StreamRecord[] {
  let chars = 0;
  for (let i = 0; i < records.length; i++) {
    chars += records[i]!.json.length;
    if (i > 0 && chars > max) return records.slice(0, i);
  }
  return records;
}

/** Decodes records `DECODE_SLICE` at a time, yielding the event loop between slices. */
async function decodeInSlices(records: readonly StreamRecord[]): Promise<Entry[]> {
  const entries: Entry[] = [];
  for (let i = 0; i < records.length; i += DECODE_SLICE) {
    if (i > 0) await new Promise((resolve) => setImmediate(resolve));
    for (const r of records.slice(i, i + DECODE_SLICE)) entries.push(toEntry(r, r.endsEntry));
  }
  return entries;
}

function toConnectorError(err: unknown): ConnectorError {
  if (err instanceof ConnectorError) return err;
  // An unexpected exception is most likely a bug or a transient fault: retry rather than lose data.
  return new RetryableError(`unexpected error: ${(err as Error)?.message ?? String(err)}`, { cause: err });
}

/**
 * Delivers one destination's stream, in order, while this process holds the destination's lease:
 * read a batch (full, or old enough), write it with retries, dead-letter what is refused for good,
 * then move the cursor past it. A process that dies mid-batch leaves the cursor where it was, so
 * the next holder writes that batch again — connectors make that harmless (events keyed on `_id`,
 * upserts replayed in the same order), told by `resend` that it is a repeat.
 *
 * Every write attempt has a deadline this loop owns (`writeTimeoutMs`): past it the attempt is
 * abandoned and retried with backoff, whatever the connector or its libraries do with their own
 * timeouts, so no hung call can stall a destination.
 */
export class DeliveryLoop {
  private readonly deadLetters: DeadLetterStore;
  private readonly status: DestinationStatusStore;
  /** Highest stream id ever handed to the destination (by this holder or an earlier one). */
  private sentThrough: string | null = null;
  /** The last history record the destination confirmed. */
  private historyCursor = '0-0';
  /** An abandoned attempt that has not settled yet: the next one waits for it. */
  private abandoned: Promise<unknown> | undefined;
  /** The history lane rests until then (HISTORY_REST_FACTOR). */
  private historyRestsUntil = 0;
  /** Since when history has waited for the API (historyHeldBack); undefined while it does not. */
  private historyHeldSince: number | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly blocking: RedisClient,
    private readonly keys: DeliveryKeys,
    private readonly writer: DestinationWriter,
    private readonly lock: LeaderLock,
    private readonly opts: DeliveryLoopOptions,
    private readonly logger: Logger,
    /** Where the oldest undelivered records may be, on disk: read before the stream. */
    private readonly spool: Spool,
    /** Shared with the compactor, which may rewrite what this loop has not read while it is stalled. */
    private readonly turns = new StreamReadTurns(),
  ) {
    this.deadLetters = new DeadLetterStore(redis, keys);
    this.status = new DestinationStatusStore(redis, keys);
  }

  /**
   * Runs until `stop` aborts, the lease is lost, or the writer is wedged (an abandoned write that
   * will not stop). Never throws for a destination's failure.
   */
  async run(stop: AbortSignal): Promise<void> {
    // Held by this frame for the whole run; see linkedController for why not AbortSignal.any.
    const running = linkedController(stop, this.lock.signal);
    const signal = running.signal;
    let cursor = (await this.redis.get(this.keys.cursor)) ?? '0-0';
    this.historyCursor = (await this.redis.get(this.keys.historyCursor)) ?? '0-0';
    this.sentThrough = await this.status.sentThrough();
    while (!signal.aborted) {
      try {
        const { lane, batch } = await this.nextBatch(cursor, signal);
        if (batch.length === 0) continue;
        const first = batch[0]!.id;
        const last = batch[batch.length - 1]!.id;
        // History may be at the destination already (live records since it was added, an earlier backfill): always a re-send.
        const resend = lane === 'history' || (this.sentThrough !== null && compareStreamIds(first, this.sentThrough) <= 0);
        if (lane === 'live' && (this.sentThrough === null || compareStreamIds(last, this.sentThrough) > 0)) this.sentThrough = last;
        await this.status.startBatch(batch.length, lane === 'live' ? this.sentThrough : null);
        const writing = performance.now();
        const deadLettered = await this.deliver(batch, resend, signal, lane);
        if (lane === 'history' && (await this.liveWaits())) this.historyRestsUntil = Date.now() + (performance.now() - writing) * HISTORY_REST_FACTOR;
        if (!(await this.confirm(batch, batch.length - deadLettered, lane))) {
          this.logger.warn('lease lost before confirming a batch; the next holder writes it again');
          return;
        }
        if (lane === 'history') {
          this.historyCursor = last;
          continue;
        }
        cursor = last;
        this.turns.setStalled(false);
        await this.afterSpoolBatch(cursor);
        if (this.writer.details) await this.status.setDetails(this.writer.details());
      } catch (err) {
        if (err instanceof WedgedWriterError) {
          this.logger.error({ err: err.message }, 'destination writer wedged; reopening it');
          return;
        }
        if (signal.aborted) return;
        // Redis trouble: wait and read the cursor again.
        this.logger.warn({ err: isOutOfMemoryError(err) ? OUT_OF_MEMORY_LOG : (err as Error).message }, 'delivery loop error');
        await sleep(this.opts.pollMs, signal).catch(() => undefined);
        cursor = (await this.redis.get(this.keys.cursor).catch(() => null)) ?? cursor;
      }
    }
  }

  /**
   * Moves the cursor past the batch. The spiller may have moved some of its records to disk while
   * it was written (and taken them off the record count then): in turn with it, only the others
   * are taken off now.
   */
  private confirm(batch: Entry[], written: number, lane: Lane = 'live'): Promise<boolean> {
    const last = batch[batch.length - 1]!;
    const entry = entryIdOf(last.id);
    const trimBelow = last.endsEntry ? nextStreamId(entry) : entry;
    // The history lane has a cursor, a stream and a count of its own, and nothing of it is ever spilled.
    const [cursorKey, streamKey, queuedKey] = lane === 'history' ? [this.keys.historyCursor, this.keys.history, this.keys.historyQueued] : [this.keys.cursor, this.keys.stream, this.keys.queued];
    return this.spool.exclusive(async () => {
      const spilled = lane === 'history' ? null : this.spool.committedThrough;
      const stillCounted = spilled === null ? batch.length : batch.filter((e) => compareStreamIds(e.id, spilled) > 0).length;
      const now = Date.now();
      const slot = seriesSlot(this.keys, 'delivered', now);
      const confirmed = await CONFIRM.run(
        this.redis,
        7,
        this.keys.lock,
        cursorKey,
        streamKey,
        this.keys.status,
        queuedKey,
        slot.key,
        this.keys.events,
        this.lock.token,
        last.id,
        trimBelow,
        batch.length,
        new Date(now).toISOString(),
        stillCounted,
        slot.field,
        slot.expiresAt,
        MAX_MARKERS,
        written,
      );
      return confirmed === 1;
    });
  }

  /** Deletes the spool segments now delivered; their loss would only mean reading them again. */
  private async afterSpoolBatch(cursor: string): Promise<void> {
    if (!this.spool.hasData) return;
    await this.spool.dropThrough(cursor).catch((err: unknown) => this.logger.warn({ err: (err as Error).message }, 'could not delete delivered spool segments'));
    await this.status.setSpool(this.spool.backlog(cursor));
  }

  /**
   * Up to `maxRecords` records after `cursor` from the stream, and the last entry read. An entry
   * holds one record or a block of up to a whole group commit's (jobs/routing/stream-entries.ts), so entries
   * are read a page at a time, each page sized by the records per entry seen so far: a backlog of
   * large blocks is not read (and sent over the network) a thousand entries at a time for a batch
   * of a thousand records, nor a stream of single records one entry at a time.
   */
  private readAfter(cursor: string, maxRecords: number): Promise<{ records: StreamRecord[]; lastEntry: string }> {
    return this.turns.read(() => this.readPages(cursor, maxRecords));
  }

  private async readPages(cursor: string, maxRecords: number, stream = this.keys.stream): Promise<{ records: StreamRecord[]; lastEntry: string }> {
    const records: StreamRecord[] = [];
    let lastEntry = entryIdOf(cursor);
    let start = rangeStartAfter(cursor);
    let page = Math.min(maxRecords, FIRST_PAGE_ENTRIES);
    let entriesRead = 0;
    for (;;) {
      const raw = await this.redis.xrangeBuffer(stream, start, '+', 'COUNT', page);
      const entries = raw.map(([id, fields]): [string, Buffer[]] => [id.toString(), fields]);
      records.push(...recordsAfter(entries, cursor, maxRecords - records.length));
      if (entries.length > 0) lastEntry = entries[entries.length - 1]![0];
      entriesRead += entries.length;
      if (records.length >= maxRecords || entries.length < page) return { records, lastEntry };
      start = `(${lastEntry}`;
      const perEntry = Math.max(1, records.length / entriesRead);
      page = Math.max(1, Math.min(maxRecords, Math.ceil((maxRecords - records.length) / perEntry)));
    }
  }

  /**
   * Records on disk past the cursor come first: they are older than any in the stream. Otherwise
   * waits until `maxRecords` are queued after the cursor or the oldest has waited `maxAgeMs`.
   */
  private async nextBatch(cursor: string, signal: AbortSignal): Promise<{ lane: Lane; batch: Entry[] }> {
    const { maxRecords } = this.opts.batch;
    while (!signal.aborted) {
      if (this.spool.hasAfter(cursor)) return { lane: 'live', batch: (await this.spool.readAfter(cursor, maxRecords)).map((r) => toEntry(r, false)) };
      const gathered = await this.gather(cursor, signal);
      if (gathered === 'spilled') continue;
      if (gathered === 'idle') {
        const limit = this.opts.historyBatchRecords ?? Math.min(maxRecords, HISTORY_BATCH_RECORDS);
        const { records } = await this.readPages(this.historyCursor, limit, this.keys.history);
        return { lane: 'history', batch: await decodeInSlices(withinChars(records, HISTORY_BATCH_CHARS)) };
      }
      return { lane: 'live', batch: gathered.map((r) => toEntry(r, r.endsEntry)) };
    }
    return { lane: 'live', batch: [] };
  }

  /** Whether live records wait for the destination (its stream's record count). */
  private async liveWaits(): Promise<boolean> {
    return Number((await this.redis.get(this.keys.queued)) ?? 0) > 0;
  }

  /**
   * Whether history must wait for the API (historyHeldBack); logged once as it starts and once as
   * it ends. A wait longer than HISTORY_MAX_HOLD_MS lets one batch go, so that a host whose API is
   * always busy still finishes its backfills, slowly.
   */
  private heldBack(): boolean {
    let held = this.opts.historyHeldBack?.() ?? false;
    const now = Date.now();
    if (held && this.historyHeldSince !== undefined && now - this.historyHeldSince >= HISTORY_MAX_HOLD_MS) {
      held = false;
      this.historyHeldSince = now;
    } else if (held !== (this.historyHeldSince !== undefined)) {
      this.historyHeldSince = held ? now : undefined;
      this.logger.debug(held ? "history waits: the API's event loop is delayed" : "history resumes: the API's event loop is not delayed");
    }
    return held;
  }

  /** Whether history waits in the destination's history lane (jobs/history/backfill.ts). */
  private async historyWaits(): Promise<boolean> {
    return Number((await this.redis.get(this.keys.historyQueued)) ?? 0) > 0;
  }

  /**
   * Records after `cursor` from the stream, until `maxRecords` are in hand or the oldest has
   * waited `maxAgeMs`. After each wait only the entries that came meanwhile are read: what is in
   * hand is never read or decoded again, so a batch costs its records once however it trickles in.
   *
   * The spiller may move records to disk meanwhile. Those in hand stay in hand (confirm counts
   * them). Those past them leave the stream, so a read that ran after such a spill skipped them:
   * its records are dropped, and the batch ends with what was in hand, or, when nothing was,
   * `'spilled'` says to read the spool first.
   */
  private async gather(cursor: string, signal: AbortSignal): Promise<StreamRecord[] | 'spilled' | 'idle'> {
    const { maxRecords, maxAgeMs } = this.opts.batch;
    const held: StreamRecord[] = [];
    let after = cursor;
    while (!signal.aborted) {
      const { records, lastEntry } = await this.readAfter(after, maxRecords - held.length);
      // A spill commits its frame to disk (hasAfter) before Redis drops it, so a read that missed it sees it here.
      if (this.spool.hasAfter(after)) return held.length > 0 ? held : 'spilled';
      held.push(...records);
      // Nothing live in hand: history may go now (unless it rests), and live records that come meanwhile wait one history batch at most.
      const resting = this.historyRestsUntil - Date.now();
      if (held.length === 0 && resting <= 0 && !this.heldBack() && (await this.historyWaits())) return 'idle';
      if (held.length > 0) {
        const age = Date.now() - streamIdTime(held[0]!.id);
        if (held.length >= maxRecords || age >= maxAgeMs) return held;
        // A batch under way reads what came meanwhile a step at a time, not at each new entry:
        // single events arrive an entry each, and waking for each cost the worker two Redis round
        // trips a record (bench/RESULTS.md). A full batch waits a step at most.
        await sleep(Math.min(maxAgeMs - age, this.opts.pollMs, Math.max(MIN_GATHER_STEP_MS, maxAgeMs / GATHER_STEPS)), signal).catch(() => undefined);
      } else await this.waitForMore(lastEntry, resting > 0 ? Math.min(resting, this.opts.pollMs) : this.opts.pollMs);
      // Below maxRecords a read takes whole entries, so the next one starts after the last.
      after = lastEntry;
    }
    return [];
  }

  private async waitForMore(after: string, ms: number): Promise<void> {
    await this.blocking.xread('COUNT', 1, 'BLOCK', Math.max(1, Math.ceil(ms)), 'STREAMS', this.keys.stream, after);
  }

  /**
   * One write attempt under the loop's deadline. When the deadline passes, the attempt's signal
   * aborts and this rejects at once; the attempt is kept so that the next one can wait for it.
   * When the loop stops, the attempt gets a short grace to finish before the batch is handed back.
   */
  private async attempt(records: TrackedRecord[], options: WriteOptions, signal: AbortSignal): Promise<RecordOutcome[]> {
    let write: Promise<RecordOutcome[]> | undefined;
    const timeoutMs = this.opts.writeTimeoutMs;
    try {
      return await withDeadline(
        {
          timeoutMs,
          signal,
          timeoutError: () => new RetryableError(`the write did not finish within ${timeoutMs} ms; abandoned, to be retried`, { reason: 'timeout' }),
        },
        (deadline) => (write = this.writer.write(records, deadline, options)),
      );
    } catch (err) {
      if (write && signal.aborted) await settlesWithin(write, Math.min(STOP_GRACE_MS, timeoutMs));
      else if (write && err instanceof RetryableError && err.details.reason === 'timeout') this.abandoned = write;
      throw err;
    }
  }

  /** Before writing again, lets an abandoned attempt stop; one that will not means the writer is wedged. */
  private async awaitAbandoned(signal: AbortSignal): Promise<void> {
    if (!this.abandoned) return;
    const settled = await settlesWithin(this.abandoned, this.opts.writeTimeoutMs, signal);
    signal.throwIfAborted();
    if (!settled) throw new WedgedWriterError(`a write abandoned after ${this.opts.writeTimeoutMs} ms did not stop within as long again`);
    this.abandoned = undefined;
  }

  /** Writes until every record is delivered or dead-lettered; resolves the number dead-lettered. Throws only when aborted or wedged. */
  private async deliver(batch: Entry[], resend: boolean, signal: AbortSignal, lane: Lane = 'live'): Promise<number> {
    let pending = batch;
    let attempt = 0;
    let deadLettered = 0;
    while (pending.length > 0) {
      signal.throwIfAborted();
      await this.awaitAbandoned(signal);
      let outcomes: RecordOutcome[];
      try {
        outcomes = await this.attempt(pending.map((e) => e.record), { resend: resend || attempt > 0, ...(lane === 'history' ? { history: true } : {}) }, signal);
        if (outcomes.length !== pending.length) throw new RetryableError(`connector answered ${outcomes.length} outcomes for ${pending.length} records`);
      } catch (err) {
        signal.throwIfAborted();
        const error = toConnectorError(err);
        if (error.kind === 'permanent') {
          await this.status.recordError(error);
          await this.deadLetters.add(pending.map((e) => ({ record: e.record, error })));
          return deadLettered + pending.length;
        }
        const wait = error.kind === 'configuration' ? this.opts.configRecheckMs : backoffDelay(attempt, this.opts.backoff, (error as RetryableError).retryAfterMs);
        attempt++;
        await this.status.recordError(error, new Date(), { attempts: attempt, at: new Date(Date.now() + wait) });
        this.logger.warn({ kind: error.kind, reason: error.details.reason, err: error.message, attempt, waitMs: wait, records: pending.length }, 'destination write failed; retrying');
        this.turns.setStalled(true);
        await sleep(wait, signal);
        continue;
      }
      const dead: Array<{ record: TrackedRecord; error: ConnectorError }> = [];
      const again: Entry[] = [];
      let retryAfterMs = 0;
      outcomes.forEach((outcome, i) => {
        const entry = pending[i]!;
        if (outcome.status === 'failed') dead.push({ record: entry.record, error: outcome.error });
        else if (outcome.status === 'retry') {
          entry.attempts++;
          if (entry.attempts >= this.opts.maxRecordAttempts) dead.push({ record: entry.record, error: outcome.error });
          else {
            again.push(entry);
            retryAfterMs = Math.max(retryAfterMs, (outcome.error as RetryableError).retryAfterMs ?? 0);
          }
        }
      });
      await this.deadLetters.add(dead);
      deadLettered += dead.length;
      pending = again;
      if (pending.length > 0) {
        this.turns.setStalled(true);
        await sleep(backoffDelay(attempt++, this.opts.backoff, retryAfterMs), signal);
      }
    }
    return deadLettered;
  }
}
