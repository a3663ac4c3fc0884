import { randomUUID } from 'node:crypto';
import { createRedisClient, targetOf, type RedisClient, type RedisLocation } from '../../core/redis/cluster';
import type { HttpContext } from '../../core/requests/request-state';
import type { Logger } from '../../core/logger';
import type { TrackedRecord } from '../../core/records/types';
import type { TrackerResolver } from '../../ingest/resolver';
import { privacyPlan, type PrivacyPlan } from '../../core/records/privacy';
import { buildLiveEntry, redactEntry } from './live-entry';
import { stringifyExactJson } from '../../core/records/exact-json';

/** A subscriber gets each entry as the JSON text that went over Redis: SSE sends it as it is. */
export type LiveListener = (entryJson: string) => void;

export interface LiveFeedOptions {
  /** Publishes entries and keeps the watch list (the API's producer connection). */
  redis: RedisClient;
  /** For the subscriber connection, opened on the first subscription only. */
  redisLocation: RedisLocation;
  redisPrefix: string;
  /** Attributes a refused request that never reached a tracker (a malformed body with a header token). */
  resolver: TrackerResolver;
  logger: Logger;
  /** How often an API process reads which trackers are watched on other processes. */
  pollMs?: number;
  /** How long a watch lasts unless its process renews it (it renews at a third of this). */
  watchTtlMs?: number;
}

const TOKEN_IN_HEADER = /^Tracker +(\S+) *$/i;

/**
 * The console's live view of a tracker's requests, across every API process. A request is
 * published (Redis PUBLISH) only while someone watches its tracker, so an unwatched tracker costs
 * one Map lookup per request. Who watches what is a sorted set of `<process>/<tracker>` members
 * scored by expiry: a watching process renews its own members and removes one when its last
 * viewer of that tracker leaves (a crashed process's members expire); each API process reads the
 * set once per `pollMs`. A watch that starts or ends on another process is honoured within about
 * `pollMs`.
 */
export class LiveFeed {
  private readonly listeners = new Map<string, Set<LiveListener>>();
  private readonly closers = new Set<() => void>();
  private remoteWatched = new Set<string>();
  private subscriber: RedisClient | undefined;
  private readonly pollTimer: NodeJS.Timeout;
  private renewTimer: NodeJS.Timeout | undefined;
  private readonly pollMs: number;
  private readonly watchTtlMs: number;
  private readonly watchKey: string;
  /** Names this process's members of the watch set. */
  private readonly processId = randomUUID();

  constructor(private readonly options: LiveFeedOptions) {
    this.pollMs = options.pollMs ?? 1000;
    this.watchTtlMs = options.watchTtlMs ?? 15_000;
    this.watchKey = `${options.redisPrefix}:live:watched`;
    this.pollTimer = setInterval(() => void this.pollWatched(), this.pollMs).unref();
  }


  /** Calls `listener` with each request of the tracker from now on; returns the unsubscribe. */
  async subscribe(trackerId: string, listener: LiveListener): Promise<() => void> {
    let set = this.listeners.get(trackerId);
    if (!set) {
      set = new Set();
      this.listeners.set(trackerId, set);
      await this.ensureSubscriber().subscribe(this.channel(trackerId));
    }
    set.add(listener);
    await this.renewWatches();
    this.renewTimer ??= setInterval(() => void this.renewWatches(), this.watchTtlMs / 3).unref();
    return () => this.unsubscribe(trackerId, listener);
  }

  isWatched(trackerId: string): boolean {
    return this.listeners.has(trackerId) || this.remoteWatched.has(trackerId);
  }

  /** `fn` runs at close (an open event stream ends then, so shutdown need not wait for it). */
  onClose(fn: () => void): () => void {
    this.closers.add(fn);
    return () => this.closers.delete(fn);
  }

  async close(): Promise<void> {
    for (const fn of [...this.closers]) fn();
    this.closers.clear();
    clearInterval(this.pollTimer);
    if (this.renewTimer) clearInterval(this.renewTimer);
    this.listeners.clear();
    this.subscriber?.disconnect();
  }

  /** A finished v3 request, its answer final (src/http/request-observers.ts). */
  observe(ctx: HttpContext): void {
    const trackerId = ctx.state.trackerId;
    const records = ctx.state.liveRecords ?? [];
    if (trackerId !== undefined) {
      if (this.isWatched(trackerId)) this.publish(trackerId, ctx, records, ctx.state.liveDuplicates ?? 0, ctx.state.privacy);
      return;
    }
    // Refused before its tracker was known (unreadable body, too large, wrong type…): the token in
    // the header or the URL still says whose it was. Only while something is watched at all.
    if (ctx.status < 400 || (this.listeners.size === 0 && this.remoteWatched.size === 0)) return;
    const token = TOKEN_IN_HEADER.exec(ctx.get('authorization'))?.[1] ?? new URLSearchParams(ctx.querystring).get('_token') ?? undefined;
    if (!token) return;
    // Built now: the context is not ours once the answer is sent.
    const entry = buildLiveEntry(ctx, []);
    this.options.resolver.resolve(token).then(
      (tracker) => {
        if (!tracker || !this.isWatched(tracker.id)) return;
        if (tracker.privacyRules.length > 0) redactEntry(entry, privacyPlan(tracker));
        this.send(tracker.id, stringifyExactJson(entry));
      },
      () => undefined,
    );
  }

  private publish(trackerId: string, ctx: HttpContext, records: readonly TrackedRecord[], duplicates: number, privacy: PrivacyPlan | undefined): void {
    this.send(trackerId, stringifyExactJson(buildLiveEntry(ctx, records, duplicates, privacy)));
  }

  private send(trackerId: string, entryJson: string): void {
    // A live view is best effort: a failed publish must never touch the request.
    this.options.redis.publish(this.channel(trackerId), entryJson).catch((err: Error) => this.options.logger.debug({ err: err.message }, 'live publish failed'));
  }

  private unsubscribe(trackerId: string, listener: LiveListener): void {
    const set = this.listeners.get(trackerId);
    if (!set?.delete(listener) || set.size > 0) return;
    this.listeners.delete(trackerId);
    this.subscriber?.unsubscribe(this.channel(trackerId)).catch(() => undefined);
    this.options.redis.zrem(this.watchKey, this.member(trackerId)).catch(() => undefined);
    if (this.listeners.size === 0 && this.renewTimer) {
      clearInterval(this.renewTimer);
      this.renewTimer = undefined;
    }
  }

  private ensureSubscriber(): RedisClient {
    if (this.subscriber) return this.subscriber;
    const subscriber = createRedisClient(targetOf(this.options.redisLocation), 'worker');
    subscriber.on('message', (channel: string, message: string) => {
      const trackerId = channel.slice(this.channelPrefix().length);
      for (const listener of this.listeners.get(trackerId) ?? []) listener(message);
    });
    this.subscriber = subscriber;
    return subscriber;
  }

  private async renewWatches(): Promise<void> {
    if (this.listeners.size === 0) return;
    const expiry = Date.now() + this.watchTtlMs;
    const members = [...this.listeners.keys()].flatMap((id) => [expiry, this.member(id)]);
    await this.options.redis.zadd(this.watchKey, ...members).catch(() => undefined);
  }

  private async pollWatched(): Promise<void> {
    const now = Date.now();
    try {
      const [, members] = (await this.options.redis.multi().zremrangebyscore(this.watchKey, '-inf', String(now)).zrange(this.watchKey, '0', '-1').exec()) ?? [];
      if (!members || members[0]) return;
      const own = `${this.processId}/`;
      const others = (members[1] as string[]).filter((m) => !m.startsWith(own));
      this.remoteWatched = new Set(others.map((m) => m.slice(m.indexOf('/') + 1)));
    } catch {
      // Redis away: keep the last list; requests are refused meanwhile anyway.
    }
  }

  private member(trackerId: string): string {
    return `${this.processId}/${trackerId}`;
  }

  private channelPrefix(): string {
    return `${this.options.redisPrefix}:live:channel:`;
  }

  private channel(trackerId: string): string {
    return this.channelPrefix() + trackerId;
  }
}
