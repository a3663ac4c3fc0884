/** A node to start discovering a Redis Cluster from; the client learns the others from it. */
export interface ClusterSeed {
  host: string;
  port: number;
}

/** REDIS_CLUSTER_NODES, parsed. */
export interface ClusterSeeds {
  /** At least one; more let the client start while some of them are down. Duplicates removed. */
  nodes: readonly ClusterSeed[];
  /** The entries were `rediss://` URLs: every node is reached over TLS. Default false. */
  tls: boolean;
  /** From the entries' URLs (`redis://user:password@host:port`); the same for every node. */
  username: string | undefined;
  password: string | undefined;
}

export class ClusterNodesError extends Error {
  override name = 'ClusterNodesError';
}

const EXAMPLE = 'e.g. REDIS_CLUSTER_NODES=redis-1.internal:6379,redis-2.internal:6379';

interface Entry extends ClusterSeed {
  tls: boolean;
  username: string | undefined;
  password: string | undefined;
}

/** The entry as an error may show it: never its password. */
function shown(entry: string): string {
  return JSON.stringify(entry.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:@/]*:)[^@/]*@/i, '$1***@'));
}

function checkedPort(entry: string, port: number): number {
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new ClusterNodesError(`${shown(entry)}: the port must be from 1 to 65535`);
  return port;
}

function parseUrlEntry(entry: string): Entry {
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    throw new ClusterNodesError(`${shown(entry)} is not a valid URL`);
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') throw new ClusterNodesError(`${shown(entry)}: only redis:// and rediss:// URLs name a Redis node`);
  // A cluster has database 0 only, and its client takes no per-URL options.
  if ((url.pathname !== '' && url.pathname !== '/') || url.search !== '') throw new ClusterNodesError(`${shown(entry)}: a cluster node is host and port only, without a database number or options`);
  if (url.hostname === '') throw new ClusterNodesError(`${shown(entry)} names no host`);
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: checkedPort(entry, url.port === '' ? 6379 : Number(url.port)),
    tls: url.protocol === 'rediss:',
    username: url.username === '' ? undefined : decodeURIComponent(url.username),
    password: url.password === '' ? undefined : decodeURIComponent(url.password),
  };
}

function parseEntry(entry: string): Entry {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(entry)) return parseUrlEntry(entry);
  const match = /^(?:\[([0-9a-f:.]+)\]|([^\s:[\]/@]+)):([0-9]+)$/i.exec(entry);
  if (!match) throw new ClusterNodesError(`${shown(entry)} is not host:port (${EXAMPLE})`);
  return { host: match[1] ?? match[2]!, port: checkedPort(entry, Number(match[3])), tls: false, username: undefined, password: undefined };
}

/**
 * Reads a comma-separated list of seed nodes: `host:port` (`[::1]:6379` for IPv6), or
 * `redis://[user:password@]host[:port]` and `rediss://…` for credentials and TLS, the same for
 * every entry. Throws ClusterNodesError, naming the entry (never its password) and what is wrong.
 */
export function parseClusterNodes(text: string): ClusterSeeds {
  const entries = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map(parseEntry);
  if (entries.length === 0) throw new ClusterNodesError(`no node given (${EXAMPLE})`);
  const [first] = entries as [Entry, ...Entry[]];
  if (entries.some((e) => e.tls !== first.tls || e.username !== first.username || e.password !== first.password)) {
    throw new ClusterNodesError('every node must be given the same way: all redis:// or all rediss://, with the same credentials');
  }
  const nodes = new Map<string, ClusterSeed>();
  for (const { host, port } of entries) nodes.set(`${host.toLowerCase()}:${port}`, Object.freeze({ host, port }));
  return Object.freeze({ nodes: Object.freeze([...nodes.values()]), tls: first.tls, username: first.username, password: first.password });
}
