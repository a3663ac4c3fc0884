/**
 * Worker timings for tests: discovery, leases, retries and polls in tens of milliseconds, so that a
 * test waits on behaviour rather than on production's intervals. A test that needs another value
 * spreads these and overrides it.
 */
export const FAST_DELIVERY = { backoff: { baseMs: 10, maxMs: 50 }, maxRecordAttempts: 3, configRecheckMs: 100, pollMs: 100, writeTimeoutMs: 30_000 };

/** startWorkerRuntime's options with FAST_DELIVERY. */
export const FAST_WORKER = { discoverIntervalMs: 50, leaseMs: 2000, delivery: FAST_DELIVERY };
