import type { Redis } from 'ioredis';
import { isCluster, type RedisClient } from './cluster';

/** What became of the request on one Redis: a rewrite started, nothing to rewrite, or why not. */
export interface PersistenceRewrite {
  node: string;
  appendOnlyFile: 'rewriting' | 'off' | string;
  snapshot: 'saving' | 'off' | string;
}

const describeError = (err: unknown) => `refused: ${(err as Error).message.split('\n')[0]}`;

async function rewriteOne(node: Redis): Promise<PersistenceRewrite> {
  const name = `${node.options.host ?? 'redis'}:${node.options.port ?? 6379}`;
  let config: string[];
  try {
    config = [...((await node.config('GET', 'appendonly')) as string[]), ...((await node.config('GET', 'save')) as string[])];
  } catch (err) {
    // A managed Redis often renames or forbids CONFIG: say so rather than guess.
    const why = describeError(err);
    return { node: name, appendOnlyFile: why, snapshot: why };
  }
  const setting = (key: string) => config[config.indexOf(key) + 1] ?? '';
  const aofOn = setting('appendonly') === 'yes';
  const rdbOn = setting('save').trim() !== '';
  const appendOnlyFile = aofOn ? await node.bgrewriteaof().then(() => 'rewriting', describeError) : 'off';
  // SCHEDULE: while the append-only file is being rewritten, the snapshot starts right after it.
  const snapshot = rdbOn ? await node.call('BGSAVE', 'SCHEDULE').then(() => 'saving', describeError) : 'off';
  return { node: name, appendOnlyFile, snapshot };
}

/**
 * Asks Redis to write its persistence files afresh from what it holds now (BGREWRITEAOF when the
 * append-only file is on, BGSAVE when snapshots are), on every node of a cluster, replicas
 * included. Replacing a value does not take the old one out of the append-only file, which keeps
 * every write since its last rewrite: a secret stored plain before it was encrypted, or encrypted
 * under a retired key, stays there until then. Copies already taken (backups, other replicas) are
 * not reached.
 */
export async function rewritePersistence(redis: RedisClient): Promise<PersistenceRewrite[]> {
  const nodes = isCluster(redis) ? redis.nodes('all') : [redis];
  return Promise.all(nodes.map(rewriteOne));
}
