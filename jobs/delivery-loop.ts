import type { Redis } from 'ioredis';
import { ConnectorError, RetryableError } from '../connectors/errors';
import type { BatchLimits, DestinationWriter, RecordOutcome } from '../connectors/types';
import type { Logger } from '../src/logger';
import type { TrackedRecord } from '../src/records/types';
import { backoffDelay, sleep, type BackoffPolicy } from './backoff';
import { DeadLetterStore } from './dead-letters';
import { DestinationStatusStore } from './destination-status';
import { streamIdTime, type DeliveryKeys } from './keys';
import type { LeaderLock } from './leader-lock';

const CONFIRM = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[2], ARGV[2])
redis.call('XTRIM', KEYS[3], 'MINID', ARGV[3])
redis.call('HINCRBY', KEYS[4], 'delivered', ARGV[4])
redis.call('HINCRBY', KEYS[4], 'batches', 1)
redis.call('HSET', KEYS[4], 'lastDeliveredAt', ARGV[5], 'inFlight', '0', 'paused', '')
return 1`;

export interface DeliveryLoopOptions {
  batch: BatchLimits;
  backoff: BackoffPolicy;
  /** A record answered `retry` this many times in a row is dead-lettered. Default 10. */
  maxRecordAttempts: number;
  /** While paused on a configuration error, the settings are tried again this often. Default 30 s. */
  configRecheckMs: number;
  /** Longest single wait on the stream, so that stopping is noticed quickly. Default 1000 ms. */
  pollMs: number;
}

export const DEFAULT_DELIVERY_OPTIONS: Omit<DeliveryLoopOptions, 'batch'> = {
  backoff: { baseMs: 500, maxMs: 60_000 },
  maxRecordAttempts: 10,
  configRecheckMs: 30_000,
  pollMs: 1000,
};

interface Entry {
  id: string;
  record: TrackedRecord;
  attempts: number;
}

function toConnectorError(err: unknown): ConnectorError {
  if (err instanceof ConnectorError) return err;
  // An unexpected exception is most likely a bug or a transient fault: retry rather than lose data.
  return new RetryableError(`unexpected error: ${(err as Error)?.message ?? String(err)}`, { cause: err });
}

/** The stream id right after `id`, for XTRIM MINID (which keeps ids ≥ its threshold). */
function nextStreamId(id: string): string {
  const [ms, seq] = id.split('-');
  return `${ms}-${BigInt(seq ?? '0') + 1n}`;
}

/**
 * Delivers one destination's stream, in order, while this process holds the destination's lease:
 * read a batch (full, or old enough), write it with retries, dead-letter what is refused for good,
 * then move the cursor past it. A process that dies mid-batch leaves the cursor where it was, so
 * the next holder writes that batch again — connectors make that harmless (events keyed on `_id`,
 * upserts replayed in the same order).
 */
export class DeliveryLoop {
  private readonly deadLetters: DeadLetterStore;
  private readonly status: DestinationStatusStore;

  constructor(
    private readonly redis: Redis,
    private readonly blocking: Redis,
    private readonly keys: DeliveryKeys,
    private readonly writer: DestinationWriter,
    private readonly lock: LeaderLock,
    private readonly opts: DeliveryLoopOptions,
    private readonly logger: Logger,
  ) {
    this.deadLetters = new DeadLetterStore(redis, keys);
    this.status = new DestinationStatusStore(redis, keys);
  }

  /** Runs until `stop` aborts or the lease is lost. Never throws for a destination's failure. */
  async run(stop: AbortSignal): Promise<void> {
    const signal = AbortSignal.any([stop, this.lock.signal]);
    let cursor = (await this.redis.get(this.keys.cursor)) ?? '0-0';
    while (!signal.aborted) {
      try {
        const batch = await this.nextBatch(cursor, signal);
        if (batch.length === 0) continue;
        await this.status.setInFlight(batch.length);
        await this.deliver(batch, signal);
        const last = batch[batch.length - 1]!.id;
        const confirmed = await this.redis.eval(CONFIRM, 4, this.keys.lock, this.keys.cursor, this.keys.stream, this.keys.status, this.lock.token, last, nextStreamId(last), batch.length, new Date().toISOString());
        if (confirmed !== 1) {
          this.logger.warn('lease lost before confirming a batch; the next holder writes it again');
          return;
        }
        cursor = last;
        if (this.writer.details) await this.status.setDetails(this.writer.details());
      } catch (err) {
        if (signal.aborted) return;
        // Redis trouble: wait and read the cursor again.
        this.logger.warn({ err: (err as Error).message }, 'delivery loop error');
        await sleep(this.opts.pollMs, signal).catch(() => undefined);
        cursor = (await this.redis.get(this.keys.cursor).catch(() => null)) ?? cursor;
      }
    }
  }

  /** Waits until `maxRecords` are queued after the cursor or the oldest has waited `maxAgeMs`. */
  private async nextBatch(cursor: string, signal: AbortSignal): Promise<Entry[]> {
    const { maxRecords, maxAgeMs } = this.opts.batch;
    while (!signal.aborted) {
      const raw = await this.redis.xrange(this.keys.stream, `(${cursor}`, '+', 'COUNT', maxRecords);
      if (raw.length > 0) {
        const age = Date.now() - streamIdTime(raw[0]![0]);
        if (raw.length >= maxRecords || age >= maxAgeMs) return raw.map(([id, fields]) => ({ id, record: JSON.parse(fields[1]!) as TrackedRecord, attempts: 0 }));
        await this.waitForMore(raw[raw.length - 1]![0], Math.min(maxAgeMs - age, this.opts.pollMs));
      } else {
        await this.waitForMore(cursor, this.opts.pollMs);
      }
    }
    return [];
  }

  private async waitForMore(after: string, ms: number): Promise<void> {
    await this.blocking.xread('COUNT', 1, 'BLOCK', Math.max(1, Math.ceil(ms)), 'STREAMS', this.keys.stream, after);
  }

  /** Writes until every record is delivered or dead-lettered. Throws only when aborted. */
  private async deliver(batch: Entry[], signal: AbortSignal): Promise<void> {
    let pending = batch;
    let attempt = 0;
    while (pending.length > 0) {
      signal.throwIfAborted();
      let outcomes: RecordOutcome[];
      try {
        outcomes = await this.writer.write(
          pending.map((e) => e.record),
          signal,
        );
        if (outcomes.length !== pending.length) throw new RetryableError(`connector answered ${outcomes.length} outcomes for ${pending.length} records`);
      } catch (err) {
        signal.throwIfAborted();
        const error = toConnectorError(err);
        await this.status.recordError(error);
        if (error.kind === 'permanent') {
          await this.deadLetters.add(pending.map((e) => ({ record: e.record, error })));
          return;
        }
        const wait = error.kind === 'configuration' ? this.opts.configRecheckMs : backoffDelay(attempt++, this.opts.backoff, (error as RetryableError).retryAfterMs);
        this.logger.warn({ kind: error.kind, err: error.message, waitMs: wait, records: pending.length }, 'destination write failed; retrying');
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
      pending = again;
      if (pending.length > 0) await sleep(backoffDelay(attempt++, this.opts.backoff, retryAfterMs), signal);
    }
  }
}
