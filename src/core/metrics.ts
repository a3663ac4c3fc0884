import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

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
