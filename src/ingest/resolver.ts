import type { TrackerStore } from '../core/trackers/store';
import { tokenDigest, tokensEqual } from '../core/trackers/tokens';
import { activeTokens, type Tracker } from '../core/trackers/types';

interface CacheEntry {
  tracker: Tracker | undefined;
  expiresAt: number;
}

/**
 * Token → tracker on the request path. Hits (and misses, so a flood of bad tokens does not
 * reach Redis) are cached for `ttlMs`; that TTL is how long a revoked token may keep working
 * on a process that had it cached.
 */
export class TrackerResolver {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly pending = new Map<string, Promise<Tracker | undefined>>();

  constructor(
    private readonly store: TrackerStore,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxEntries = 10_000,
  ) {}

  async resolve(token: string): Promise<Tracker | undefined> {
    const key = tokenDigest(token);
    const hit = this.cache.get(key);
    if (hit && hit.expiresAt > this.now()) return hit.tracker;
    let lookup = this.pending.get(key);
    if (!lookup) {
      lookup = this.load(token).finally(() => this.pending.delete(key));
      this.pending.set(key, lookup);
    }
    const tracker = await lookup;
    if (this.cache.size >= this.maxEntries) this.cache.clear();
    this.cache.set(key, { tracker, expiresAt: this.now() + this.ttlMs });
    return tracker;
  }

  private async load(token: string): Promise<Tracker | undefined> {
    const id = await this.store.trackerIdForToken(token);
    if (id === undefined) return undefined;
    const tracker = await this.store.get(id);
    if (!tracker) return undefined;
    return activeTokens(tracker).some((t) => tokensEqual(t.token, token)) ? tracker : undefined;
  }

  /** A tracker by its id (webhook sources name it in their URL), cached like tokens. */
  async byId(id: string): Promise<Tracker | undefined> {
    const key = `id:${id}`;
    const hit = this.cache.get(key);
    if (hit && hit.expiresAt > this.now()) return hit.tracker;
    let lookup = this.pending.get(key);
    if (!lookup) {
      lookup = this.store.get(id).finally(() => this.pending.delete(key));
      this.pending.set(key, lookup);
    }
    const tracker = await lookup;
    if (this.cache.size >= this.maxEntries) this.cache.clear();
    this.cache.set(key, { tracker, expiresAt: this.now() + this.ttlMs });
    return tracker;
  }

  clear(): void {
    this.cache.clear();
  }
}
