import type { Queue } from 'bullmq';
import { ApiError } from '../errors';
import type { TrackedRecord } from '../records/types';
import { INGEST_JOB_NAME, type IngestJobData } from './ingest-job';

export interface IngestWriterOptions {
  timeoutMs: number;
  maxBatchRecords: number;
  maxInflight: number;
  retryAfterSeconds: number;
  /** True when the Redis connection can take a command now; false answers 503 at once. */
  isConnected: () => boolean;
  onFlush?: (records: number, jobs: number, seconds: number) => void;
}

interface Pending {
  trackerId: string;
  records: TrackedRecord[];
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit toward Redis. A request's records wait for the next write; while `maxInflight`
 * writes are under way, new requests pile up and go together in the one after. Each request
 * still resolves only once its own records are in Redis, so a 2xx always means "stored".
 */
export class IngestWriter {
  private pending: Pending[] = [];
  private inflight = 0;
  private scheduled = false;
  private closed = false;
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly queue: Queue<IngestJobData>,
    private readonly opts: IngestWriterOptions,
  ) {}

  write(trackerId: string, records: TrackedRecord[]): Promise<void> {
    if (this.closed) return Promise.reject(new ApiError('ERR_SHUTTING_DOWN', undefined, undefined, this.retryAfter()));
    if (!this.opts.isConnected()) return Promise.reject(this.unavailable());
    return new Promise<void>((resolve, reject) => {
      const entry: Pending = { trackerId, records, resolve, reject };
      const timer = setTimeout(() => {
        // Still waiting to be sent: withdraw it, so a 503 means "not stored".
        const at = this.pending.indexOf(entry);
        if (at >= 0) this.pending.splice(at, 1);
        reject(this.unavailable('The queue did not confirm the write in time; the records may or may not be stored.'));
      }, this.opts.timeoutMs);
      entry.resolve = () => {
        clearTimeout(timer);
        resolve();
      };
      entry.reject = (err) => {
        clearTimeout(timer);
        reject(err);
      };
      this.pending.push(entry);
      this.schedule();
    });
  }

  /** Stops taking writes and resolves once everything already accepted is in Redis (or failed). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.pending.length === 0 && this.inflight === 0) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private retryAfter(): Record<string, string> {
    return { 'Retry-After': String(this.opts.retryAfterSeconds) };
  }

  private unavailable(detail?: string): ApiError {
    return new ApiError('ERR_QUEUE_UNAVAILABLE', detail, undefined, this.retryAfter());
  }

  private schedule(): void {
    if (this.scheduled || this.inflight >= this.opts.maxInflight || this.pending.length === 0) return;
    this.scheduled = true;
    // setImmediate lets every request parsed in this turn of the event loop join the same write.
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private takeBatch(): Pending[] {
    let count = 0;
    let n = 0;
    while (n < this.pending.length && (n === 0 || count + this.pending[n]!.records.length <= this.opts.maxBatchRecords)) {
      count += this.pending[n]!.records.length;
      n++;
    }
    return this.pending.splice(0, n);
  }

  private async flush(): Promise<void> {
    if (this.pending.length === 0 || this.inflight >= this.opts.maxInflight) return;
    const batch = this.takeBatch();
    this.inflight++;
    this.schedule();
    const byTracker = new Map<string, TrackedRecord[]>();
    let records = 0;
    for (const p of batch) {
      records += p.records.length;
      const list = byTracker.get(p.trackerId);
      if (list) list.push(...p.records);
      else byTracker.set(p.trackerId, p.records.slice());
    }
    const started = process.hrtime.bigint();
    try {
      if (byTracker.size === 1) {
        // The common case. addBulk builds an ioredis Pipeline, whose constructor copies every
        // script command BullMQ defines onto the new object: a cost per write that add() avoids.
        const [trackerId, list] = byTracker.entries().next().value!;
        await this.queue.add(INGEST_JOB_NAME, { trackerId, records: list });
      } else {
        await this.queue.addBulk([...byTracker].map(([trackerId, list]) => ({ name: INGEST_JOB_NAME, data: { trackerId, records: list } })));
      }
      this.opts.onFlush?.(records, byTracker.size, Number(process.hrtime.bigint() - started) / 1e9);
      for (const p of batch) p.resolve();
    } catch (err) {
      const error = this.unavailable(`The queue refused the write: ${(err as Error).message}`);
      for (const p of batch) p.reject(error);
    } finally {
      this.inflight--;
      this.schedule();
      if (this.pending.length === 0 && this.inflight === 0) this.idleWaiters.splice(0).forEach((w) => w());
    }
  }
}
