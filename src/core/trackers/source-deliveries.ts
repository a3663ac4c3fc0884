import type { RedisClient } from '../redis/cluster';

/** How many deliveries a source keeps, newest first, by default: enough to see a setup work or fail. */
export const SOURCE_DELIVERIES_KEPT = 50;

/**
 * What became of a delivery: stored; answered but not stored again (its delivery id was seen within
 * the tracker's window); a handshake answered (Slack's `url_verification`); or refused.
 */
export type DeliveryVerdict = 'accepted' | 'duplicate' | 'challenge' | 'refused';

/** One delivery to a webhook source, as its owner sees it in the console and the admin API. */
export interface SourceDelivery {
  /** When the answer was decided (ISO 8601). */
  at: string;
  verdict: DeliveryVerdict;
  /** The HTTP status the sender got. */
  status: number;
  /**
   * Refused only: why, as the 401's message starts (`missing-header`, `malformed-header`,
   * `bad-signature`, `timestamp-outside-tolerance`), or the error code of another refusal
   * (`ERR_RATE_LIMITED`, `ERR_PAYLOAD_TOO_LARGE`, `ERR_QUEUE_UNAVAILABLE`…).
   */
  reason?: string;
  /** Refused only: the message the sender got. */
  message?: string;
  /** The record's `_event` as mapped (accepted and duplicate only). */
  event?: string;
  /** The record's `_id`: the sender's delivery id, or a generated one when it has none. */
  id?: string;
}

/** A list per source: `<prefix>:source-deliveries:<tracker>:<source>`, newest first. */
export function sourceDeliveriesKey(prefix: string, trackerId: string, sourceId: string): string {
  return `${prefix}:source-deliveries:${trackerId}:${sourceId}`;
}

/**
 * The last deliveries of each webhook source, in a capped Redis list. Writing is one pipelined
 * LPUSH + LTRIM that nobody waits for: the sender's answer never depends on it, and a failure
 * (Redis away) only leaves a gap in what the console shows.
 */
export class SourceDeliveryLog {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    /** Deliveries kept per source; default {@link SOURCE_DELIVERIES_KEPT}. */
    private readonly kept = SOURCE_DELIVERIES_KEPT,
    private readonly onError: (err: Error) => void = () => undefined,
  ) {}

  record(trackerId: string, sourceId: string, delivery: SourceDelivery): void {
    const key = sourceDeliveriesKey(this.prefix, trackerId, sourceId);
    this.redis
      .pipeline()
      .lpush(key, JSON.stringify(delivery))
      .ltrim(key, 0, this.kept - 1)
      .exec()
      .then((results) => {
        const failed = results?.find(([err]) => err)?.[0];
        if (failed) this.onError(failed);
      }, this.onError);
  }

  /** Newest first. */
  async list(trackerId: string, sourceId: string, limit = this.kept): Promise<SourceDelivery[]> {
    const items = await this.redis.lrange(sourceDeliveriesKey(this.prefix, trackerId, sourceId), 0, limit - 1);
    return items.map((item) => JSON.parse(item) as SourceDelivery);
  }

  async clear(trackerId: string, sourceId: string): Promise<void> {
    await this.redis.del(sourceDeliveriesKey(this.prefix, trackerId, sourceId));
  }
}
