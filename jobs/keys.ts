/**
 * Redis keys of the delivery stage. Every key starts with the configured prefix so that a
 * prefix in braces (`{tributary}`) keeps them in one Redis Cluster slot, as the Lua scripts need.
 */
export interface DestinationRef {
  trackerId: string;
  destinationId: string;
}

export function destinationKey(prefix: string, ref: DestinationRef): string {
  return `${prefix}:dest:${ref.trackerId}:${ref.destinationId}`;
}

export function deliveryKeys(prefix: string, ref: DestinationRef) {
  const base = destinationKey(prefix, ref);
  return {
    /** Records waiting for this destination, in accepted order (a Redis stream). */
    stream: `${base}:stream`,
    /** Id of the last stream entry the destination has confirmed. */
    cursor: `${base}:cursor`,
    /** Held by the one process that delivers this destination. */
    lock: `${base}:lock`,
    /** Records the destination refused for good, with the reason (a Redis stream). */
    deadLetters: `${base}:dlq`,
    /** Counters and the last error, for status views. */
    status: `${base}:status`,
    /** Id of the last record moved to the disk spool (jobs/spool.ts); the records up to it are on disk. */
    spilled: `${base}:spilled`,
  };
}

export type DeliveryKeys = ReturnType<typeof deliveryKeys>;

/**
 * Records of a tracker that had no destination when they were routed (a Redis stream). They go,
 * oldest first, to the destinations the tracker has next.
 */
export function trackerBacklogKey(prefix: string, trackerId: string): string {
  return `${prefix}:backlog:${trackerId}`;
}

/** The ids of the trackers that have a backlog (a Redis set). */
export function backlogIndexKey(prefix: string): string {
  return `${prefix}:backlogs`;
}

/** The id of the last ingest job the router fanned out; jobs are routed strictly in id order. */
export function routerCursorKey(prefix: string): string {
  return `${prefix}:router:last-job`;
}

/** Milliseconds part of a stream id (`<ms>-<seq>`): when the entry was added. */
export function streamIdTime(id: string): number {
  return Number(id.slice(0, id.indexOf('-')));
}

/** Stream ids compare by (ms, seq). */
export function compareStreamIds(a: string, b: string): number {
  const [am, as] = a.split('-').map(BigInt) as [bigint, bigint];
  const [bm, bs] = b.split('-').map(BigInt) as [bigint, bigint];
  return am === bm ? (as === bs ? 0 : as < bs ? -1 : 1) : am < bm ? -1 : 1;
}

/** The stream id right after `id`, for XTRIM MINID (which keeps ids ≥ its threshold). */
export function nextStreamId(id: string): string {
  const [ms, seq] = id.split('-');
  return `${ms}-${BigInt(seq ?? '0') + 1n}`;
}
