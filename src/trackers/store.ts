import type { Redis } from 'ioredis';
import { tokenDigest } from './tokens';
import { TrackerSchema, type Tracker } from './types';

/**
 * Trackers live in Redis as JSON, with one index key per active token digest.
 * Keys: `<prefix>:trackers` (set of ids), `<prefix>:tracker:<id>`, `<prefix>:token:<sha256>`.
 */
export class TrackerStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private trackerKey(id: string): string {
    return `${this.prefix}:tracker:${id}`;
  }
  private tokenKey(digest: string): string {
    return `${this.prefix}:token:${digest}`;
  }
  private get indexKey(): string {
    return `${this.prefix}:trackers`;
  }

  async get(id: string): Promise<Tracker | undefined> {
    const json = await this.redis.get(this.trackerKey(id));
    return json === null ? undefined : TrackerSchema.parse(JSON.parse(json));
  }

  async list(): Promise<Tracker[]> {
    const ids = (await this.redis.smembers(this.indexKey)).sort();
    if (ids.length === 0) return [];
    const jsons = await this.redis.mget(ids.map((id) => this.trackerKey(id)));
    return jsons.flatMap((json) => (json === null ? [] : [TrackerSchema.parse(JSON.parse(json))]));
  }

  async trackerIdForToken(token: string): Promise<string | undefined> {
    return (await this.redis.get(this.tokenKey(tokenDigest(token)))) ?? undefined;
  }

  /** Writes the tracker and its token index in one transaction. */
  async save(tracker: Tracker): Promise<void> {
    const valid = TrackerSchema.parse(tracker);
    const tx = this.redis.multi().set(this.trackerKey(valid.id), JSON.stringify(valid)).sadd(this.indexKey, valid.id);
    for (const t of valid.tokens) {
      if (t.revokedAt) tx.del(this.tokenKey(tokenDigest(t.token)));
      else tx.set(this.tokenKey(tokenDigest(t.token)), valid.id);
    }
    await tx.exec();
  }

  /** Creates the tracker unless its id or one of its tokens is taken. Returns false when taken. */
  async create(tracker: Tracker): Promise<boolean> {
    const claimed = await this.redis.set(this.trackerKey(tracker.id), '{}', 'NX');
    if (claimed === null) return false;
    for (const t of tracker.tokens) {
      const owner = await this.trackerIdForToken(t.token);
      if (owner !== undefined && owner !== tracker.id) {
        await this.redis.del(this.trackerKey(tracker.id));
        return false;
      }
    }
    await this.save(tracker);
    return true;
  }

  async remove(id: string): Promise<boolean> {
    const tracker = await this.get(id);
    if (!tracker) return false;
    const tx = this.redis.multi().del(this.trackerKey(id)).srem(this.indexKey, id);
    for (const t of tracker.tokens) tx.del(this.tokenKey(tokenDigest(t.token)));
    await tx.exec();
    return true;
  }
}
