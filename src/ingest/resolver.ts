import type { TrackerStore } from '../core/trackers/store';
import { tokensEqual } from '../core/trackers/tokens';
import { activeTokens, type Tracker } from '../core/trackers/types';

interface CacheEntry {
  tracker: Tracker | undefined;
  expiresAt: number;
}

/**
 * Token → tracker on the request path. Hits (and misses, so a flood of bad tokens does not
 * reach Redis) are cached for `ttlMs`; that TTL is how long a revoked token may keep working
 * on a process that had it cached. The cache is keyed by the token itself, in this process's
 * memory only (the request holds it there anyway): a SHA-256 of it on every request was about 2 %
 * of the API's CPU. Redis and the logs only ever see its digest (TrackerStore, src/core/redact.ts).
 * Trackers by id are cached apart, so that no token can be taken for an id.
 */
export class TrackerResolver {
  private readonly byToken = new Map<string, CacheEntry>();
  private readonly byTrackerId = new Map<string, CacheEntry>();
  private readonly pending = new Map<string, Promise<Tracker | undefined>>();
  private readonly pendingIds = new Map<string, Promise<Tracker | undefined>>();
  /** Bumped by `clear`: an answer looked up before it is not cached. */
  private generation = 0;

  constructor(
    private readonly store: TrackerStore,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxEntries = 10_000,
  ) {}

  resolve(token: string): Promise<Tracker | undefined> {
    return this.cached(this.byToken, this.pending, token, () => this.load(token));
  }

  private async load(token: string): Promise<Tracker | undefined> {
    const id = await this.store.trackerIdForToken(token);
    if (id === undefined) return undefined;
    const tracker = await this.store.get(id);
    if (!tracker) return undefined;
    return activeTokens(tracker).some((t) => tokensEqual(t.token, token)) ? tracker : undefined;
  }

  /** A tracker by its id (webhook sources name it in their URL), cached like tokens. */
  byId(id: string): Promise<Tracker | undefined> {
    return this.cached(this.byTrackerId, this.pendingIds, id, () => this.store.get(id));
  }

  /**
   * Forgets every cached answer (a tracker changed: src/core/trackers/changes.ts). A lookup under
   * way began before the change, so its answer is given to the requests that wait for it but not
   * cached.
   */
  clear(): void {
    this.generation++;
    this.byToken.clear();
    this.byTrackerId.clear();
    this.pending.clear();
    this.pendingIds.clear();
  }

  /** A cached answer while fresh, else one lookup shared by every request asking meanwhile. */
  private async cached(cache: Map<string, CacheEntry>, pending: Map<string, Promise<Tracker | undefined>>, key: string, load: () => Promise<Tracker | undefined>): Promise<Tracker | undefined> {
    const hit = cache.get(key);
    if (hit && hit.expiresAt > this.now()) return hit.tracker;
    const generation = this.generation;
    let lookup = pending.get(key);
    if (!lookup) {
      lookup = load().finally(() => {
        if (pending.get(key) === lookup) pending.delete(key);
      });
      pending.set(key, lookup);
    }
    const tracker = await lookup;
    if (generation !== this.generation) return tracker;
    if (cache.size >= this.maxEntries) cache.clear();
    cache.set(key, { tracker, expiresAt: this.now() + this.ttlMs });
    return tracker;
  }
}
