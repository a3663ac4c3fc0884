/// <reference path="./cluster-key-slot.d.ts" />
import calculateSlot from 'cluster-key-slot';
import { Cluster, type ClusterOptions, type Redis } from 'ioredis';
import { withDeadline } from '../deadline';
import type { ClusterSeeds } from './cluster-nodes';
import { sendLargeArgumentsAsBuffers } from './large-arguments';
import { createRedis, reconnectDelay, roleOptions, type RedisRole } from './redis';

/** A connection to one Redis or to a Redis Cluster. */
export type RedisClient = Redis | Cluster;

/** Where Redis is: the fields of Config (src/core/config.ts) that say it. */
export interface RedisTarget {
  /** One Redis: REDIS_URL, or the URL of the embedded one. */
  redisUrl: string | undefined;
  /** A Redis Cluster: REDIS_CLUSTER_NODES. */
  redisCluster: ClusterSeeds | undefined;
}

/**
 * How often a client reads the slot map again by itself, so that it learns a failover before its
 * next command meets the dead master (a producer would answer that command 503). Each reading opens
 * a connection of its own for one CLUSTER SLOTS: a cost per client, which blocking duplicates do
 * without (see duplicateClient).
 */
const SLOTS_REFRESH_MS = 5000;

/**
 * A worker's command that meets a closed connection or CLUSTERDOWN is tried again this often, up to
 * WORKER_MAX_REDIRECTIONS times (every redirect counts): about 30 s, through a failover with Redis's
 * default `cluster-node-timeout` of 15 s. Past that, the command fails and the worker's own retry
 * (routing, delivery) takes over, as after any Redis error.
 */
const WORKER_RETRY_DELAY_MS = 300;
const WORKER_MAX_REDIRECTIONS = 100;

/**
 * A Redis Cluster client in the manner of a role (src/core/redis/redis.ts). The producer fails
 * fast in the cluster's way too: no offline queue, and no retry of a command whose connection
 * closed (ioredis' `retryDelayOnFailover` would send it again to whichever node serves the slot
 * next, and the master that died may have run it: a job stored twice) or that met CLUSTERDOWN
 * while a replica takes over: the request is answered 503 at once and the client retries. Redirects
 * (MOVED, ASK) and TRYAGAIN are always followed: Redis ran nothing. The worker waits: offline queue
 * on, `maxRetriesPerRequest: null` on every node as BullMQ requires of a blocking connection,
 * commands retried through a failover. Both reconnect by themselves with a capped backoff.
 */
export function createCluster(seeds: ClusterSeeds, role: RedisRole, extra: ClusterOptions = {}): Cluster {
  const { enableOfflineQueue, ...perNode } = roleOptions(role);
  const producer = role === 'producer';
  const cluster = sendLargeArgumentsAsBuffers(new Cluster(
    seeds.nodes.map(({ host, port }) => ({ host, port })),
    {
      clusterRetryStrategy: reconnectDelay,
      enableOfflineQueue,
      retryDelayOnFailover: producer ? 0 : WORKER_RETRY_DELAY_MS,
      retryDelayOnClusterDown: producer ? 0 : WORKER_RETRY_DELAY_MS,
      ...(producer ? {} : { maxRedirections: WORKER_MAX_REDIRECTIONS }),
      slotsRefreshInterval: SLOTS_REFRESH_MS,
      // With TLS the certificates name the hosts, so connect by name, not by a resolved address.
      ...(seeds.tls ? { dnsLookup: (address: string, callback: (err: null, address: string) => void) => callback(null, address) } : {}),
      ...extra,
      redisOptions: { ...perNode, username: seeds.username, password: seeds.password, ...(seeds.tls ? { tls: {} } : {}), ...extra.redisOptions },
    },
  ));
  // As for one Redis: 'error' without a listener would crash the process; nodes report theirs apart.
  cluster.on('error', () => undefined);
  cluster.on('node error', () => undefined);
  if (producer) {
    // A node's connection opens on its first command. Without an offline queue, ioredis refuses every
    // other command for that node until it is open: open each master's as soon as the node is known.
    cluster.on('+node', (node: Redis) => {
      if (node.status === 'wait' && !node.options.readOnly) node.connect().catch(() => undefined);
    });
  }
  return cluster;
}

/** One Redis (REDIS_URL or the embedded one) or a Redis Cluster (REDIS_CLUSTER_NODES), in the role's manner. */
export function createRedisClient(target: RedisTarget, role: RedisRole): RedisClient {
  if (target.redisCluster) return createCluster(target.redisCluster, role);
  if (target.redisUrl) return createRedis(target.redisUrl, role);
  throw new Error('No Redis to connect to: neither a URL nor cluster nodes were given');
}

/**
 * A connection of its own for a blocking command (XREAD BLOCK), in the same role. On a cluster, a
 * whole cluster client that does not read the slot map on a timer: it blocks on one key's master
 * and learns a failover from that connection closing, and there may be one per destination.
 */
export function duplicateClient(client: RedisClient): RedisClient {
  const copy = isCluster(client) ? client.duplicate([], { slotsRefreshInterval: 0 }) : client.duplicate();
  copy.on('error', () => undefined);
  if (isCluster(copy)) copy.on('node error', () => undefined);
  return copy;
}

/** True for a Redis Cluster client, also behind BullMQ's connection adapter. */
export function isCluster(client: RedisClient | object): client is Cluster {
  return (client as { isCluster?: unknown }).isCluster === true;
}

/** The hash slot of a key (hash tags included), computed as ioredis does to route the key's commands. */
export function slotOf(key: string): number {
  return calculateSlot(key);
}

/**
 * The connection to the master that serves `key`'s slot, as the client knows it now: the very
 * connection the cluster sends the key's commands on. A command that needs one node and not a
 * key — `WAIT` after a write — must go there: on another connection WAIT would wait for that
 * connection's own writes, of which there are none, and answer at once.
 */
export function nodeForKey(cluster: Cluster, key: string): Redis {
  const slot = slotOf(key);
  const owner = cluster.slots[slot]?.[0];
  if (owner === undefined) throw new Error(`No node is known to serve slot ${slot} yet: the cluster client is not connected`);
  const node = cluster.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === owner);
  if (!node) throw new Error(`The master of slot ${slot} (${owner}) has no connection in the cluster client`);
  return node;
}

/**
 * Waits for `replicas` replicas to have the writes made so far on the connection(s) that carry
 * `keys` (one WAIT on one Redis; on a cluster one WAIT per master that serves some of the keys, at
 * once). Resolves with the fewest replicas any of those masters reached within `timeoutMs`.
 */
export async function waitForReplicas(client: RedisClient, keys: readonly string[], replicas: number, timeoutMs: number): Promise<number> {
  if (!isCluster(client)) return client.wait(replicas, timeoutMs);
  const masters = new Set(keys.map((key) => nodeForKey(client, key)));
  if (masters.size === 0) throw new Error('waitForReplicas on a cluster needs the keys that were written');
  const counts = await Promise.all([...masters].map((node) => node.wait(replicas, timeoutMs)));
  return Math.min(...counts);
}

/** Memory of one Redis, from INFO memory. */
export interface NodeMemory {
  /** `host:port`. */
  node: string;
  /** What Redis counts against its limit: `used_memory` less replication and AOF buffers (`mem_not_counted_for_evict`). */
  usedBytes: number;
  /** `maxmemory`; 0 when Redis has none. */
  maxmemoryBytes: number;
  /** `maxmemory_policy`, when reported. */
  policy: string | null;
}

function infoField(info: string, name: string): string | undefined {
  return new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim();
}

/** Reads INFO memory's figures. */
export function parseInfoMemory(node: string, info: string): NodeMemory {
  return {
    node,
    usedBytes: Number(infoField(info, 'used_memory') ?? 0) - Number(infoField(info, 'mem_not_counted_for_evict') ?? 0),
    maxmemoryBytes: Number(infoField(info, 'maxmemory') ?? 0),
    policy: infoField(info, 'maxmemory_policy') ?? null,
  };
}

/**
 * INFO memory of every master the client knows, asked at once. A master that does not answer
 * within `timeoutMs` (default 1000) is listed in `unanswered` — it is down, or a replica is taking
 * over its slots — rather than failing the others' figures: they still take writes and may fill up.
 */
export async function infoMemoryOfMasters(cluster: Cluster, { timeoutMs = 1000 } = {}): Promise<{ masters: NodeMemory[]; unanswered: string[] }> {
  const masters = cluster.nodes('master');
  const never = new AbortController().signal;
  const answers = await Promise.allSettled(
    masters.map((node) => withDeadline({ timeoutMs, signal: never, timeoutError: () => new Error('INFO memory: no answer') }, () => node.info('memory'))),
  );
  const out: { masters: NodeMemory[]; unanswered: string[] } = { masters: [], unanswered: [] };
  answers.forEach((answer, i) => {
    const name = `${masters[i]!.options.host}:${masters[i]!.options.port}`;
    if (answer.status === 'fulfilled') out.masters.push(parseInfoMemory(name, answer.value));
    else out.unanswered.push(name);
  });
  return out;
}

/** Where Redis is, as the runtimes take it: a URL (one Redis) or a target that may name a cluster. */
export type RedisLocation = string | RedisTarget;

export function targetOf(location: RedisLocation): RedisTarget {
  return typeof location === 'string' ? { redisUrl: location, redisCluster: undefined } : location;
}

/**
 * PING on one Redis, or on every master of a cluster: a cluster client's own PING reaches one
 * node, and would call the relay ready while a master that holds some shards is down.
 */
export async function pingEveryMaster(client: RedisClient): Promise<void> {
  if (!isCluster(client)) {
    await client.ping();
    return;
  }
  const masters = client.nodes('master');
  if (masters.length === 0) throw new Error('the cluster client knows no master yet');
  await Promise.all(masters.map((node) => node.ping()));
}

/** How often `whenConnected` looks again, and how often it says what it still waits for. */
const CONNECTED_POLL_MS = 25;
const CONNECTED_REPORT_MS = 10_000;

/**
 * Resolves once the client can serve commands on every master: one Redis ready, or a cluster
 * ready with each master's own connection ready. A cluster client says 'ready' once it has read the
 * slot map, while the connections to the masters may still be opening; a producer (no offline
 * queue) refuses a command for such a node at once, "Connection is closed.", and BullMQ's first
 * command (its version check) would leave a queue that never works. A process waits for this
 * before it builds anything on the client. Waits as long as Redis takes (rejects if the client is
 * closed meanwhile); `onWait` hears, every 10 s, what is still not connected.
 */
export async function whenConnected(client: RedisClient, onWait: (pending: string[]) => void = () => undefined): Promise<void> {
  let reportAt = Date.now() + CONNECTED_REPORT_MS;
  for (;;) {
    // Closed by its owner meanwhile (a shutdown during the start): nothing left to wait for. A cluster
    // closed while it was reconnecting stays 'disconnecting'; one that disconnects to reconnect (its
    // ready check met a node saying cluster_state:fail) is 'disconnecting' too, and not closed.
    if (client.status === 'end' || (client.status === 'disconnecting' && closedByOwner(client))) throw new Error('the Redis connection was closed before it was up');
    const pending = notConnected(client);
    if (pending.length === 0) return;
    if (Date.now() >= reportAt) {
      onWait(pending);
      reportAt = Date.now() + CONNECTED_REPORT_MS;
    }
    await new Promise((resolve) => setTimeout(resolve, CONNECTED_POLL_MS));
  }
}

/** ioredis marks a client its owner closed (`disconnect()`, `quit()`), as against one that reconnects. */
function closedByOwner(client: RedisClient): boolean {
  return (client as unknown as { manuallyClosing?: boolean }).manuallyClosing === true;
}

/** What keeps `client` from serving every master now, by name; opens master connections not yet asked for. */
function notConnected(client: RedisClient): string[] {
  if (!isCluster(client)) return client.status === 'ready' ? [] : [`redis (${client.status})`];
  if (client.status !== 'ready') return [`cluster (${client.status})`];
  const masters = client.nodes('master');
  if (masters.length === 0) return ['cluster (no master known yet)'];
  return masters.flatMap((node) => {
    if (node.status === 'ready') return [];
    if (node.status === 'wait') node.connect().catch(() => undefined);
    return [`${node.options.host}:${node.options.port} (${node.status})`];
  });
}
