import type { RedisClient } from '../redis/cluster';

/**
 * Every save of a tracker (its tokens, sources, destinations, rules…) is announced on one Redis
 * channel with the tracker's id, so that the caches of every process (the API's token cache, the
 * router's trackers, the workers' destination list) drop it at once rather than when they expire:
 * a source added with the CLI answers its first webhook, and a rule changed in the console applies
 * to the next record routed, within a second. Pub/sub is fire-and-forget: a process that misses a
 * message (disconnected meanwhile) still sees the change when its cache expires, and on
 * reconnecting it drops every cached tracker (`*`), since it cannot know what it missed.
 */

export function trackerChangesChannel(prefix: string): string {
  return `${prefix}:tracker-changes`;
}

/** Every tracker may have changed (a reconnection). */
export const ANY_TRACKER = '*';

/** Announces a change; a failure is not the caller's: the caches' lifetimes bound how stale they get. */
export async function announceTrackerChange(redis: RedisClient, prefix: string, trackerId: string): Promise<void> {
  await redis.publish(trackerChangesChannel(prefix), trackerId).catch(() => undefined);
}

/**
 * Calls `onChange` with each changed tracker's id, or ANY_TRACKER after a reconnection, from a
 * connection given to subscriber mode (`subscriber`: the caller disconnects it to stop). Resolves
 * once subscribed.
 */
export async function watchTrackerChanges(subscriber: RedisClient, prefix: string, onChange: (trackerId: string) => void): Promise<void> {
  const channel = trackerChangesChannel(prefix);
  let subscribed = false;
  subscriber.on('message', (from: string, message: string) => {
    if (from === channel) onChange(message);
  });
  subscriber.on('ready', () => {
    // ioredis subscribes again by itself; what was published meanwhile is lost.
    if (subscribed) onChange(ANY_TRACKER);
  });
  await subscriber.subscribe(channel);
  subscribed = true;
}
