import { randomUUID } from 'node:crypto';
import { ApiError } from '../core/errors';
import { isOutOfMemoryError } from '../core/redis/out-of-memory';
import type { MemoryBudget } from '../core/redis/memory-budget';
import type { TrackedRecord } from '../core/records/types';
import { bucketExpiresAt, dedupArgs, dedupKeys, DUPLICATES_TTL_MS } from './dedup';
import type { JobAdder } from './job-add';
import { partitionOf, type Keyspace } from '../core/redis/keyspace';
import { waitForReplicas, type RedisClient } from '../core/redis/cluster';
import { newIngestJob } from '../../jobs/routing/ingest-job';

export interface IngestWriterOptions {
  /** A write Redis has not confirmed after this long is answered 503. */
  timeoutMs: number;
  /** Records per coalesced write; a single larger request still goes alone. */
  maxBatchRecords: number;
  /** Writes under way at once; requests arriving meanwhile join the next one. */
  maxInflight: number;
  /**
   * Milliseconds a request waits for more requests to join its write (a fuller batch: fewer round
   * trips), counted from its arrival, so one that already waited for a free write goes with it;
   * 0: the next turn of the event loop.
   */
  lingerMs?: number;
  /** Sent as Retry-After with a 503. */
  retryAfterSeconds: number;
  /** Replicas that must confirm each write (Redis WAIT) before it counts as stored; 0: none. */
  ackReplicas?: number;
  /** The connection the jobs are written on, where WAIT is sent (needed with ackReplicas). */
  connection?: RedisClient;
  /** How long to wait for them. */
  ackTimeoutMs?: number;
  /** Where each tracker partition's queue and deduplication markers live. */
  keyspace: Keyspace;
  /** True when the Redis connection can take a command now; false answers 503 at once. */
  isConnected: () => boolean;
  /** Refuses writes at the high watermark (503 ERR_QUEUE_FULL); none: no budget. */
  memory?: MemoryBudget;
  onFlush?: (records: number, jobs: number, seconds: number) => void;
}

/** Client keys of a request's records, to be remembered for the tracker's window. */
export interface DedupRequest {
  /** The tracker's window; 0 turns deduplication off. */
  windowHours: number;
  /** Per record, its marker (see dedupMember), or undefined for a record without a client key. */
  members: ReadonlyArray<Buffer | undefined>;
}

/** Per record of a request: true when its key was accepted before, within the window (not queued again). */
export type Duplicates = boolean[];

/** The tracker a request's records are for, and how many partitions it spreads them over. */
export interface IngestTarget {
  trackerId: string;
  /** The tracker's `partitions` setting; 1 keeps every record in partition 0. */
  partitions: number;
}

/** The records of one tracker partition in one write: one ingest job. */
interface JobGroup {
  trackerId: string;
  partition: number;
  shard: number;
  records: TrackedRecord[];
  bigInts: boolean;
  /** Per keyed record, its marker and its index in the job (see dedupArgs). */
  members: Buffer[];
  indices: number[];
  keyed: Array<{ entry: Pending; index: number }>;
  windowHours: number;
}

interface Pending {
  trackerId: string;
  records: TrackedRecord[];
  /** Per record, its partition; undefined when all are in partition 0. */
  partitions: number[] | undefined;
  /** Some record may hold a bigint (normalizeRecord's `bigInts`). */
  bigInts: boolean;
  dedup: DedupRequest | undefined;
  duplicates: Duplicates | undefined;
  resolve: (duplicates: Duplicates | undefined) => void;
  reject: (err: unknown) => void;
  /** performance.now() past which the request is answered 503. */
  deadline: number;
  settled: boolean;
}

/**
 * Group commit toward Redis. A request's records wait for the next write; while `maxInflight`
 * writes are under way, new requests pile up and go together in the one after. Each request
 * still resolves only once its own records are in Redis, so a 2xx always means "stored".
 */
export class IngestWriter {
  private pending: Pending[] = [];
  /** Every unanswered write, oldest (earliest deadline) first, sent or not. */
  private waiting: Pending[] = [];
  /**
   * One timer for all writes, due at the oldest one's deadline; armed whenever `waiting` is not
   * empty. A timer per request cost ~5 µs of CPU a request, mostly in the garbage collector: with
   * one Timeout per request, ~0.7 MB outlived each scavenge and went to the old space (bench/RESULTS.md).
   */
  private timer: NodeJS.Timeout | undefined;
  private inflight = 0;
  private scheduled = false;
  /** The linger's timer while a write waits for more requests to join it (lingerMs). */
  private lingering: NodeJS.Timeout | undefined;
  private closed = false;
  private idleWaiters: Array<() => void> = [];
  private readonly keyspace: Keyspace;

  /** `adders`: what adds a job to the ingest queue of each shard, by shard (src/ingest/job-add.ts). */
  constructor(
    private readonly adders: ReadonlyArray<JobAdder>,
    private readonly opts: IngestWriterOptions,
  ) {
    this.keyspace = opts.keyspace;
    if (adders.length !== this.keyspace.shards) throw new RangeError(`${adders.length} ingest queues for ${this.keyspace.shards} shards`);
  }

  /**
   * Resolves once the records are in Redis. With `dedup`, resolves with which records were
   * duplicates: those are not queued again, atomically with the others' markers and enqueue.
   * `bigInts`: some record may hold a bigint, which is queued as exact JSON (jobs/routing/ingest-job.ts).
   */
  write(target: IngestTarget, records: TrackedRecord[], dedup?: DedupRequest, bigInts = false): Promise<Duplicates | undefined> {
    return this.admit(target, records, dedup, bigInts, false);
  }

  /** `measured`: Redis memory was sampled for this write already (see MemoryBudget.admitsMeasured). */
  private admit(target: IngestTarget, records: TrackedRecord[], dedup: DedupRequest | undefined, bigInts: boolean, measured: boolean): Promise<Duplicates | undefined> {
    const { trackerId } = target;
    if (this.closed) return Promise.reject(new ApiError('ERR_SHUTTING_DOWN', undefined, undefined, this.retryAfter()));
    if (!this.opts.isConnected()) return Promise.reject(this.unavailable());
    const memory = this.opts.memory;
    if (memory && !memory.admits()) {
      // Past the estimate of what was written since the last sample: measured once before refusing.
      if (measured) return Promise.reject(this.full());
      return memory.admitsMeasured().then((admitted) => (admitted ? this.admit(target, records, dedup, bigInts, true) : Promise.reject(this.full())));
    }
    const keyed = dedup && dedup.windowHours > 0 && dedup.members.some((m) => m !== undefined) ? dedup : undefined;
    return new Promise<Duplicates | undefined>((resolve, reject) => {
      const partitions = target.partitions > 1 ? records.map((r) => partitionOf(r, target.partitions)) : undefined;
      const entry: Pending = { trackerId, records, partitions, bigInts, dedup: keyed, duplicates: undefined, resolve, reject, deadline: performance.now() + this.opts.timeoutMs, settled: false };
      this.pending.push(entry);
      this.waiting.push(entry);
      // No timer means nothing else waits: this write is the oldest, due in timeoutMs.
      this.timer ??= setTimeout(() => this.expire(), this.opts.timeoutMs);
      this.schedule();
    });
  }

  /** Stops taking writes and resolves once everything already accepted is in Redis (or failed). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.pending.length === 0 && this.inflight === 0) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  /** Answers 503 to every write past its deadline, then re-arms for the oldest one left. */
  private expire(): void {
    this.timer = undefined;
    const now = performance.now();
    while (this.waiting.length > 0 && (this.waiting[0]!.settled || this.waiting[0]!.deadline <= now)) {
      const entry = this.waiting.shift()!;
      if (entry.settled) continue;
      // Still waiting to be sent: withdraw it, so a 503 means "not stored".
      const at = this.pending.indexOf(entry);
      if (at >= 0) this.pending.splice(at, 1);
      this.settle(entry, this.unavailable('The queue did not confirm the write in time; the records may or may not be stored.'));
    }
    if (this.waiting.length > 0) this.timer = setTimeout(() => this.expire(), this.waiting[0]!.deadline - now);
  }

  /** The first answer wins: a write confirmed after its 503 changes nothing. */
  private settle(entry: Pending, err?: unknown): void {
    if (entry.settled) return;
    entry.settled = true;
    if (err === undefined) entry.resolve(entry.duplicates);
    else entry.reject(err);
  }

  /** Forgets answered writes at the front; with none left unanswered, the timer goes too. */
  private dropSettled(): void {
    while (this.waiting.length > 0 && this.waiting[0]!.settled) this.waiting.shift();
    if (this.waiting.length === 0 && this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  private retryAfter(): Record<string, string> {
    return { 'Retry-After': String(this.opts.retryAfterSeconds) };
  }

  private unavailable(detail?: string): ApiError {
    return new ApiError('ERR_QUEUE_UNAVAILABLE', detail, undefined, this.retryAfter());
  }

  private full(): ApiError {
    return new ApiError('ERR_QUEUE_FULL', undefined, undefined, this.retryAfter());
  }

  private schedule(): void {
    // A write already due on the next turn takes whatever has arrived by then.
    if (this.inflight >= this.opts.maxInflight || this.pending.length === 0 || (this.scheduled && !this.lingering)) return;
    // The linger counts from the oldest waiting request's arrival: requests that piled up while
    // every write was under way have waited long enough, and go as soon as a write is free.
    const linger = this.lingerLeft();
    const full = linger > 0 && this.pendingRecords() >= this.opts.maxBatchRecords;
    if (this.lingering && full) {
      // A full batch does not wait out the linger.
      clearTimeout(this.lingering);
      this.lingering = undefined;
      this.scheduled = false;
    }
    if (this.scheduled) return;
    this.scheduled = true;
    if (linger > 0 && !full) {
      this.lingering = setTimeout(() => {
        this.lingering = undefined;
        this.scheduled = false;
        void this.flush();
      }, linger);
      return;
    }
    // setImmediate lets every request parsed in this turn of the event loop join the same write.
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  /** Milliseconds the oldest unsent request has yet to linger (≤ 0: none left). */
  private lingerLeft(): number {
    const linger = this.opts.lingerMs ?? 0;
    if (linger <= 0) return 0;
    // admit() set the deadline timeoutMs after the arrival: derived rather than kept twice.
    const arrived = this.pending[0]!.deadline - this.opts.timeoutMs;
    return arrived + linger - performance.now();
  }

  private pendingRecords(): number {
    let n = 0;
    for (const p of this.pending) n += p.records.length;
    return n;
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

  /**
   * Per tracker partition, one job, each added by one script call (src/ingest/job-add.ts): with its
   * records and, for a partition with keyed records, the dedup script that marks them and lists the
   * duplicates among them for the router, atomically.
   */
  private async addJobs(batch: Pending[]): Promise<Set<number>> {
    const groups = new Map<string, JobGroup>();
    const groupOf = (trackerId: string, partition: number): JobGroup => {
      const name = partition === 0 ? trackerId : `${trackerId}/${partition}`;
      let g = groups.get(name);
      if (!g) groups.set(name, (g = { trackerId, partition, shard: this.keyspace.shardOf({ trackerId, partition }), records: [], bigInts: false, members: [], indices: [], keyed: [], windowHours: 0 }));
      return g;
    };
    for (const p of batch) {
      if (!p.partitions && !p.dedup) {
        // The common case: one group takes the request's records as they are.
        const g = groupOf(p.trackerId, 0);
        g.bigInts ||= p.bigInts;
        g.records.push(...p.records);
        continue;
      }
      p.records.forEach((record, i) => {
        const g = groupOf(p.trackerId, p.partitions?.[i] ?? 0);
        g.bigInts ||= p.bigInts;
        if (p.dedup) g.windowHours = Math.max(g.windowHours, p.dedup.windowHours);
        const member = p.dedup?.members[i];
        if (member) {
          g.members.push(member);
          g.indices.push(g.records.length);
          g.keyed.push({ entry: p, index: i });
        }
        g.records.push(record);
      });
    }
    const now = Date.now();
    const writes: Array<Promise<unknown>> = [];
    for (const g of groups.values()) writes.push(g.keyed.length > 0 ? this.addKeyed(g, now) : this.adders[g.shard]!.add(newIngestJob(g.trackerId, g.records, g.bigInts, undefined, g.partition)));
    const shards = new Set([...groups.values()].map((g) => g.shard));
    // Every write is awaited before the first failure is thrown: no request is answered while a
    // write that holds its records is still under way.
    if (writes.length === 1) {
      await writes[0];
      return shards;
    }
    const outcomes = await Promise.allSettled(writes);
    const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (failed) throw failed.reason;
    return shards;
  }

  private async addKeyed(g: JobGroup, now: number): Promise<void> {
    const token = randomUUID();
    const prefix = this.keyspace.shardPrefix(g.shard);
    const keys = dedupKeys(prefix, g.trackerId, token, g.windowHours, now, g.partition);
    const flags = await this.adders[g.shard]!.add(newIngestJob(g.trackerId, g.records, g.bigInts, token, g.partition), { keys, args: dedupArgs(bucketExpiresAt(g.windowHours, now), DUPLICATES_TTL_MS, g.members, g.indices) });
    g.keyed.forEach(({ entry, index }, k) => {
      entry.duplicates ??= entry.records.map(() => false);
      entry.duplicates[index] = flags[k] === 1;
    });
  }

  /**
   * With replicated acknowledgements, the write counts once `ackReplicas` replicas have it: one
   * WAIT for the whole group commit on one Redis; on a cluster one WAIT on each master that took
   * some of its shards, at once. Short of them, the requests are answered 503 (the records may or
   * may not be stored: a retry with a client key is safe).
   */
  private async awaitReplicas(shards: ReadonlySet<number>): Promise<void> {
    const wanted = this.opts.ackReplicas ?? 0;
    if (wanted === 0) return;
    const client = this.opts.connection;
    if (!client) throw new Error('REDIS_ACK_REPLICAS is set but the ingest writer was given no connection to send WAIT on');
    const keys = [...shards].map((s) => this.keyspace.shardPrefix(s));
    const acked = await waitForReplicas(client, keys, wanted, this.opts.ackTimeoutMs ?? 500);
    if (acked < wanted) throw new Error(`${acked} of the ${wanted} replica(s) REDIS_ACK_REPLICAS asks for confirmed the write within ${this.opts.ackTimeoutMs ?? 500} ms; the records may or may not be stored`);
  }

  private async flush(): Promise<void> {
    if (this.pending.length === 0 || this.inflight >= this.opts.maxInflight) return;
    const batch = this.takeBatch();
    this.inflight++;
    this.schedule();
    let records = 0;
    const trackers = new Set<string>();
    for (const p of batch) {
      records += p.records.length;
      trackers.add(p.trackerId);
    }
    const started = process.hrtime.bigint();
    try {
      await this.awaitReplicas(await this.addJobs(batch));
      this.opts.memory?.wrote(records);
      this.opts.onFlush?.(records, trackers.size, Number(process.hrtime.bigint() - started) / 1e9);
      for (const p of batch) this.settle(p);
    } catch (err) {
      // Redis's own refusal names its scripts and lines: the client gets the relay's words for it.
      const error = isOutOfMemoryError(err) ? this.full() : this.unavailable(`The queue refused the write: ${(err as Error).message}`);
      for (const p of batch) this.settle(p, error);
    } finally {
      this.dropSettled();
      this.inflight--;
      this.schedule();
      if (this.pending.length === 0 && this.inflight === 0) this.idleWaiters.splice(0).forEach((w) => w());
    }
  }
}
