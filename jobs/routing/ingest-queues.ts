import { Queue, type ConnectionOptions } from 'bullmq';
import type { Keyspace } from '../../src/core/redis/keyspace';
import { INGEST_QUEUE, type IngestJobData } from './ingest-job';

/**
 * One ingest queue per shard, each under its shard's prefix (BullMQ prefixes every key of a queue
 * with it, so a shard's queue lives in its shard's slot). Index = shard.
 */
export function ingestQueues(connection: ConnectionOptions, keyspace: Keyspace): Array<Queue<IngestJobData>> {
  return Array.from({ length: keyspace.shards }, (_, s) => new Queue<IngestJobData>(INGEST_QUEUE, { connection, prefix: keyspace.shardPrefix(s) }));
}
