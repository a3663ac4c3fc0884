import type { MemoryBudgetConfig } from '../config';
import type { Logger } from '../logger';
import { infoMemoryOfMasters, isCluster, parseInfoMemory, type NodeMemory, type RedisClient } from './cluster';

/**
 * - `unknown`: not sampled yet, or Redis did not answer the last sample (its outage is answered elsewhere).
 * - `unlimited`: no limit known (`maxmemory 0` and no REDIS_MAXMEMORY_BYTES): nothing is gated.
 * - `ok`, `warning` (at or above the warn watermark), `full` (at or above the high watermark:
 *   ingest is refused until memory falls below the resume watermark).
 */
export type MemoryState = 'unknown' | 'unlimited' | 'ok' | 'warning' | 'full';

export interface MemoryWatermarks {
  /** A warning is logged on crossing it. Default 80 % of the limit. */
  warnBytes: number;
  /** Ingest is refused from here on, and a warning logged. Default 90 %. */
  highBytes: number;
  /** Once full, ingest is accepted again below this. Default 85 %. */
  resumeBytes: number;
}

/**
 * What the relay knows about Redis memory: the last sample, for /readyz, /metrics, the console. On a
 * Redis Cluster, the figures of the master nearest its limit (see fullestMaster).
 */
export interface MemorySnapshot {
  state: MemoryState;
  /** Bytes Redis counts against its limit (`used_memory` less replication and AOF buffers); null before a sample. */
  usedBytes: number | null;
  /** null when no limit is known. */
  limitBytes: number | null;
  /** Where the limit comes from: REDIS_MAXMEMORY_BYTES, or Redis's own `maxmemory`. */
  limitSource: 'setting' | 'redis' | null;
  watermarks: MemoryWatermarks | null;
  /** Redis's `maxmemory-policy`; anything but `noeviction` may evict queued records. */
  policy: string | null;
  sampledAt: string | null;
}

/** The defaults of REDIS_MEMORY_* (src/core/config.ts documents each). */
export const DEFAULT_MEMORY_BUDGET: MemoryBudgetConfig = { limitBytes: undefined, warnPercent: 80, highPercent: 90, resumePercent: 85, spillPercent: 60, sampleMs: 1000 };

/**
 * Bytes a record is assumed to take until the next sample shows what it really took: the
 * queued-record cost (about 500 bytes, docs/benchmarks.md) with room to spare, so that a burst
 * between two samples cannot run past the high watermark by much.
 */
const ASSUMED_RECORD_BYTES = 1024;

/** Shortest gap between the samples a refusal asks for, on top of the regular ones. */
const ON_DEMAND_SAMPLE_MS = 100;

/**
 * The master nearest its limit (`limitBytes`, else its own maxmemory): every master takes the
 * writes of its own slots, so the first to fill refuses them while the others still have room.
 * With no limit known anywhere, the one that uses most. A policy other than noeviction on any
 * master is reported, whichever is fullest.
 */
export function fullestMaster(masters: readonly NodeMemory[], limitBytes: number | undefined): NodeMemory | undefined {
  const share = (m: NodeMemory) => {
    const limit = limitBytes ?? m.maxmemoryBytes;
    return limit > 0 ? m.usedBytes / limit : -1;
  };
  let fullest: NodeMemory | undefined;
  for (const m of masters) {
    if (!fullest || share(m) > share(fullest) || (share(m) === share(fullest) && m.usedBytes > fullest.usedBytes)) fullest = m;
  }
  const evicting = masters.find((m) => m.policy !== null && m.policy !== 'noeviction');
  return fullest && evicting ? { ...fullest, policy: evicting.policy } : fullest;
}

/**
 * The relay's Redis memory budget, one per process: samples `INFO memory` every `sampleMs` (never
 * per request; on a Redis Cluster, of every master, judging the fullest), keeps a state with hysteresis, logs a warning once per upward crossing of the warn
 * and high watermarks, and tells ingest whether it may write. Everything else Tributary writes
 * (routing, delivery, the operator's commands) lives in the headroom above the high watermark.
 */
export class MemoryBudget {
  private snap: MemorySnapshot = { state: 'unknown', usedBytes: null, limitBytes: null, limitSource: null, watermarks: null, policy: null, sampledAt: null };
  /** Records this process wrote since the last sample, counted at ASSUMED_RECORD_BYTES each. */
  private unsampledRecords = 0;
  private timer: NodeJS.Timeout | undefined;
  private sampling: Promise<void> | undefined;
  private warnedPolicy = false;
  private lastSampleAt = 0;
  private readonly listeners = new Set<(snapshot: MemorySnapshot, previous: MemoryState) => void>();

  constructor(
    private readonly redis: RedisClient,
    private readonly logger: Logger,
    private readonly opts: MemoryBudgetConfig = DEFAULT_MEMORY_BUDGET,
  ) {}

  /** Samples now and then every `sampleMs`, until `stop()`. */
  start(): this {
    if (this.timer) return this;
    void this.sample();
    this.timer = setInterval(() => void this.sample(), this.opts.sampleMs);
    this.timer.unref();
    return this;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  snapshot(): MemorySnapshot {
    return this.snap;
  }

  /** Called with every sample whose state differs from the one before. */
  onChange(listener: (snapshot: MemorySnapshot, previous: MemoryState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * May ingest write now? No when full, or when the records this process wrote since the last
   * sample would reach the high watermark (each counted at ASSUMED_RECORD_BYTES). The request
   * asking is not counted: a write that starts below the watermark is let through, so memory
   * does reach it and the next sample says full, which /readyz reports. A Redis that did not
   * answer is not refused here: the write itself fails fast and is answered as an outage.
   */
  admits(): boolean {
    const { state, usedBytes, watermarks } = this.snap;
    if (state === 'full') return false;
    if (state === 'unknown' || usedBytes === null || watermarks === null) return true;
    if (usedBytes + this.unsampledRecords * ASSUMED_RECORD_BYTES < watermarks.highBytes) return true;
    // Refused on the estimate: measure sooner than the next tick, so the state catches up; at most
    // every ON_DEMAND_SAMPLE_MS, so that a stream of refused requests is not an INFO each.
    if (Date.now() - this.lastSampleAt >= ON_DEMAND_SAMPLE_MS) void this.sample();
    return false;
  }

  /**
   * admits(), with a refusal on the estimate alone checked against a fresh sample first (one INFO
   * memory, shared by every write asking meanwhile): a client is refused for memory Redis uses,
   * not for a guess at it. A full Redis is refused at once, without asking.
   */
  async admitsMeasured(): Promise<boolean> {
    if (this.admits()) return true;
    if (this.snap.state === 'full') return false;
    await this.sample();
    return this.admits();
  }

  /** Counts records written, until the next sample measures them. */
  wrote(records: number): void {
    this.unsampledRecords += records;
  }

  /** One INFO memory; concurrent callers share it. Resolves with the new snapshot. */
  async sample(): Promise<MemorySnapshot> {
    this.lastSampleAt = Date.now();
    this.sampling ??= this.readInfo().finally(() => (this.sampling = undefined));
    await this.sampling;
    return this.snap;
  }

  private async readInfo(): Promise<void> {
    const previous = this.snap.state;
    const pending = this.unsampledRecords;
    let figures: NodeMemory | undefined;
    try {
      figures = await this.measure();
    } catch {
      figures = undefined;
    }
    if (!figures) {
      this.snap = { ...this.snap, state: 'unknown' };
      return this.changed(previous);
    }
    this.unsampledRecords = Math.max(0, this.unsampledRecords - pending);
    const { usedBytes: used, maxmemoryBytes: redisLimit, policy } = figures;
    const limit = this.opts.limitBytes ?? (redisLimit > 0 ? redisLimit : null);
    const pct = (p: number) => Math.floor((limit ?? 0) * (p / 100));
    const watermarks = limit === null ? null : { warnBytes: pct(this.opts.warnPercent), highBytes: pct(this.opts.highPercent), resumeBytes: pct(this.opts.resumePercent) };
    this.snap = {
      state: watermarks === null ? 'unlimited' : this.nextState(previous, used, watermarks),
      usedBytes: used,
      limitBytes: limit,
      limitSource: limit === null ? null : this.opts.limitBytes !== undefined ? 'setting' : 'redis',
      watermarks,
      policy,
      sampledAt: new Date().toISOString(),
    };
    if (limit !== null && policy !== null && policy !== 'noeviction' && !this.warnedPolicy) {
      this.warnedPolicy = true;
      this.logger.warn({ policy }, "Redis's maxmemory-policy is not noeviction: at its limit Redis may evict queued records; set maxmemory-policy noeviction");
    }
    this.changed(previous);
  }

  /** One Redis's figures; on a cluster the fullest master's among those that answered (none: undefined). */
  private async measure(): Promise<NodeMemory | undefined> {
    if (!isCluster(this.redis)) return parseInfoMemory('redis', await this.redis.info('memory'));
    return fullestMaster((await infoMemoryOfMasters(this.redis)).masters, this.opts.limitBytes);
  }

  /** Up at once; down only past the hysteresis (high − resume), so a level hovered around is logged once. */
  private nextState(previous: MemoryState, used: number, w: MemoryWatermarks): MemoryState {
    const hysteresis = Math.max(0, w.highBytes - w.resumeBytes);
    if (used >= w.highBytes || (previous === 'full' && used >= w.resumeBytes)) return 'full';
    if (used >= w.warnBytes || (previous !== 'ok' && previous !== 'unknown' && previous !== 'unlimited' && used >= w.warnBytes - hysteresis)) return 'warning';
    return 'ok';
  }

  private changed(previous: MemoryState): void {
    const { state, usedBytes, limitBytes } = this.snap;
    if (state === previous) return;
    for (const listener of this.listeners) listener(this.snap, previous);
    if (state === 'unknown') return;
    const figures = { usedBytes, limitBytes, percent: usedBytes !== null && limitBytes ? Math.round((usedBytes / limitBytes) * 1000) / 10 : null };
    if (state === 'full') this.logger.warn({ ...figures, highPercent: this.opts.highPercent }, 'Redis memory at the high watermark: ingest refused (503 ERR_QUEUE_FULL) until it falls below the resume watermark');
    else if (state === 'warning' && previous !== 'full') this.logger.warn({ ...figures, warnPercent: this.opts.warnPercent }, 'Redis memory above the warn watermark');
    else if (previous === 'full') this.logger.info(figures, 'Redis memory below the resume watermark: ingest accepted again');
  }
}
