import type { Config } from '../config';
import { targetOf, type RedisTarget } from './cluster';
import { ensureRedis } from './embedded-redis';

/** The Redis a process runs on, and whether it started it. */
export interface OpenedRedis {
  target: RedisTarget;
  /** True when this process started an embedded redis-server (and stops it). */
  owned: boolean;
  /** For logs: the URL, or the cluster's seed nodes; never a password. */
  description: string;
  stop: () => Promise<void>;
}

/**
 * A Redis Cluster when REDIS_CLUSTER_NODES is set (never an embedded one then); else REDIS_URL, or
 * the embedded redis-server under DATA_DIR (src/core/redis/embedded-redis.ts). `probe` as for ensureRedis.
 */
export async function openRedisEndpoint(config: Pick<Readonly<Config>, 'redisUrl' | 'redisCluster' | 'dataDir'>, probe?: (url: string) => Promise<boolean>): Promise<OpenedRedis> {
  if (config.redisCluster) {
    const nodes = config.redisCluster.nodes.map((n) => `${n.host}:${n.port}`).join(',');
    return { target: { redisUrl: undefined, redisCluster: config.redisCluster }, owned: false, description: `Redis Cluster ${nodes}`, stop: async () => undefined };
  }
  const single = await ensureRedis(config.redisUrl, config.dataDir, probe);
  return { target: targetOf(single.url), owned: single.owned, description: single.url.replace(/\/\/[^@/]*@/, '//***@'), stop: single.stop };
}
