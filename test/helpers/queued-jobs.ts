import type { Job, Queue } from 'bullmq';
import { parseExactJson } from '../../src/core/records/exact-json';
import type { TrackedRecord } from '../../src/core/records/types';
import { queuedRecordsKey, queuedTexts, type QueuedJobData } from '../../jobs/routing/ingest-job';

/** What a test reads queued records with: any client of the queue's Redis. */
interface Getter {
  get(key: string): Promise<string | null>;
}

/** A queued ingest job's records, in order, duplicates included, whatever its format. */
export async function queuedJobRecords(redis: Getter, queue: Queue, job: Job<QueuedJobData>): Promise<TrackedRecord[]> {
  const lines = job.data.v === undefined ? null : await redis.get(queuedRecordsKey(queue.toKey(job.id!)));
  return queuedTexts(job.id!, job.data, lines).map((text) => parseExactJson(text) as TrackedRecord);
}
