import type { Redis } from 'ioredis';
import { INGEST_QUEUE, queuedRecordCount, type QueuedJobData } from '../jobs/routing/ingest-job';

export interface QueueCount {
  jobs: number;
  /** Records per tracker id, summed over every job's count. */
  records: Map<string, number>;
  /** Jobs per tracker id. */
  jobsByTracker: Map<string, number>;
}

/**
 * Reads every job of the `ingest` queue straight from BullMQ's keys (no worker runs under the
 * benchmark's prefix, so jobs are waiting, or paused/prioritized/delayed if someone changed that)
 * and counts the records they hold.
 */
export async function countQueuedRecords(redis: Redis, prefix: string): Promise<QueueCount> {
  const key = (name: string) => `${prefix}:${INGEST_QUEUE}:${name}`;
  const [wait, paused, active, prioritized, delayed] = await Promise.all([
    redis.lrange(key('wait'), 0, -1),
    redis.lrange(key('paused'), 0, -1),
    redis.lrange(key('active'), 0, -1),
    redis.zrange(key('prioritized'), '0', '-1'),
    redis.zrange(key('delayed'), '0', '-1'),
  ]);
  const ids = [...wait, ...paused, ...active, ...prioritized, ...delayed];
  const records = new Map<string, number>();
  const jobsByTracker = new Map<string, number>();
  const CHUNK = 500;
  for (let i = 0; i < ids.length; i += CHUNK) {
    const pipeline = redis.pipeline();
    for (const id of ids.slice(i, i + CHUNK)) pipeline.hget(key(id), 'data');
    const replies = (await pipeline.exec()) ?? [];
    for (const [err, json] of replies) {
      if (err) throw err;
      if (typeof json !== 'string') throw new Error('a job listed in the queue has no data');
      const data = JSON.parse(json) as QueuedJobData;
      records.set(data.trackerId, (records.get(data.trackerId) ?? 0) + queuedRecordCount(data));
      jobsByTracker.set(data.trackerId, (jobsByTracker.get(data.trackerId) ?? 0) + 1);
    }
  }
  return { jobs: ids.length, records, jobsByTracker };
}

/** Deletes every key under the prefix, BullMQ's included. */
export async function deletePrefix(redis: Redis, prefix: string): Promise<number> {
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) deleted += await redis.unlink(...keys);
  } while (cursor !== '0');
  return deleted;
}
