import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { MemorySnapshot } from './redis/memory-budget';

/** Prometheus metrics of one process, served at /metrics. */
export interface Metrics {
  registry: Registry;
  requests: Counter<'endpoint' | 'method' | 'status'>;
  recordsAccepted: Counter<'kind'>;
  recordsRejected: Counter<'code'>;
  recordsDuplicate: Counter<'tracker' | 'kind'>;
  enqueueSeconds: Histogram;
  enqueueBatchRecords: Histogram;
}

export function createMetrics(withDefaults = true): Metrics {
  const registry = new Registry();
  if (withDefaults) collectDefaultMetrics({ register: registry });
  return {
    registry,
    requests: new Counter({ name: 'tributary_http_requests_total', help: 'HTTP requests by endpoint, method and status.', labelNames: ['endpoint', 'method', 'status'], registers: [registry] }),
    recordsAccepted: new Counter({ name: 'tributary_records_accepted_total', help: 'Records stored in the queue, by kind.', labelNames: ['kind'], registers: [registry] }),
    recordsDuplicate: new Counter({ name: 'tributary_records_duplicate_total', help: 'Records whose client key was accepted before, within the window: answered, not queued again. By tracker and kind.', labelNames: ['tracker', 'kind'], registers: [registry] }),
    recordsRejected: new Counter({ name: 'tributary_records_rejected_total', help: 'Records refused, by error code.', labelNames: ['code'], registers: [registry] }),
    enqueueSeconds: new Histogram({
      name: 'tributary_enqueue_duration_seconds',
      help: 'Time of one coalesced write of records to Redis.',
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [registry],
    }),
    enqueueBatchRecords: new Histogram({ name: 'tributary_enqueue_batch_records', help: 'Records per coalesced Redis write.', buckets: [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000], registers: [registry] }),
  };
}

const MEMORY_STATES = ['unknown', 'unlimited', 'ok', 'warning', 'full'] as const;

/**
 * Redis memory as the budget last sampled it, read at each scrape. Every process samples the same
 * Redis, so a cluster's host-wide figures take the largest (`aggregator: 'max'`), not the sum.
 */
export function registerMemoryMetrics(metrics: Metrics, snapshot: () => MemorySnapshot): void {
  const registers = [metrics.registry];
  new Gauge({
    name: 'tributary_redis_memory_used_bytes',
    help: 'Redis memory counted against its limit, as last sampled (INFO memory).',
    aggregator: 'max',
    registers,
    collect() {
      this.set(snapshot().usedBytes ?? 0);
    },
  });
  new Gauge({
    name: 'tributary_redis_memory_limit_bytes',
    help: 'The Redis memory limit budgeted against (REDIS_MAXMEMORY_BYTES or maxmemory); 0 when none is known.',
    aggregator: 'max',
    registers,
    collect() {
      this.set(snapshot().limitBytes ?? 0);
    },
  });
  new Gauge({
    name: 'tributary_redis_memory_watermark_bytes',
    help: 'Watermarks of the Redis memory budget: warn (a warning is logged), high (ingest refused), resume (ingest accepted again).',
    labelNames: ['level'],
    aggregator: 'max',
    registers,
    collect() {
      const w = snapshot().watermarks;
      if (!w) return this.reset();
      this.set({ level: 'warn' }, w.warnBytes);
      this.set({ level: 'high' }, w.highBytes);
      this.set({ level: 'resume' }, w.resumeBytes);
    },
  });
  new Gauge({
    name: 'tributary_redis_memory_state',
    help: 'State of the Redis memory budget: 1 for the current one (full: ingest refused with 503 ERR_QUEUE_FULL).',
    labelNames: ['state'],
    aggregator: 'max',
    registers,
    collect() {
      const current = snapshot().state;
      for (const state of MEMORY_STATES) this.set({ state }, state === current ? 1 : 0);
    },
  });
}

/** What registerDestinationMetrics reads at each scrape (jobs/delivery/destination-counts.ts). */
export interface DestinationCountsRow {
  trackerId: string;
  destinationId: string;
  type: string;
  delivered: number;
  filtered: number;
  sampled: number;
  filterErrors: number;
}

/**
 * Each destination's records delivered and skipped by its rules, read from Redis at each scrape:
 * they are counted where delivery and routing happen, in whichever worker, so every API process
 * reads the same figures, and a cluster's host-wide figures take the largest, not the sum.
 */
export function registerDestinationMetrics(metrics: Metrics, read: () => Promise<DestinationCountsRow[]>): void {
  const registers = [metrics.registry];
  let rows: Promise<DestinationCountsRow[]> | undefined;
  // Both metrics of one scrape share one read.
  const once = () => (rows ??= read().finally(() => setImmediate(() => (rows = undefined))));
  new Counter({
    name: 'tributary_destination_records_delivered_total',
    help: 'Records a destination confirmed, by tracker, destination and type.',
    labelNames: ['tracker', 'destination', 'type'],
    aggregator: 'max',
    registers,
    async collect() {
      this.reset();
      for (const r of await once().catch(() => [])) this.inc({ tracker: r.trackerId, destination: r.destinationId, type: r.type }, r.delivered);
    },
  });
  new Counter({
    name: 'tributary_destination_records_skipped_total',
    help: "Records a destination's rules kept from it, by reason: filter (false), sample (outside it), filter_error (the filter failed on the record).",
    labelNames: ['tracker', 'destination', 'type', 'reason'],
    aggregator: 'max',
    registers,
    async collect() {
      this.reset();
      for (const r of await once().catch(() => [])) {
        const labels = { tracker: r.trackerId, destination: r.destinationId, type: r.type };
        this.inc({ ...labels, reason: 'filter' }, r.filtered);
        this.inc({ ...labels, reason: 'sample' }, r.sampled);
        this.inc({ ...labels, reason: 'filter_error' }, r.filterErrors);
      }
    },
  });
}
