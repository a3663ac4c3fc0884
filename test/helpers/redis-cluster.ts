import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { freePort } from './ports';
import { waitFor } from './wait';

const run = promisify(execFile);

export type ClusterRole = 'master' | 'replica';

/** One node as CLUSTER NODES shows it. */
export interface ClusterNodeView {
  id: string;
  port: number;
  role: ClusterRole;
  /** Marked failed (`fail`) or suspected (`fail?`) by the node asked. */
  failing: boolean;
  /** A replica's master (its node id). */
  masterId: string | undefined;
  /** Slot ranges a master serves, inclusive. */
  slots: Array<[number, number]>;
}

export interface OwnRedisClusterOptions {
  /** Default 3. */
  masters?: number;
  /** Default 1. */
  replicasPerMaster?: number;
  /** Append-only file on every node (fsync every second). Default false: tests that need it say so. */
  appendonly?: boolean;
  /**
   * `cluster-node-timeout`: how long a master may be unreachable before its replica takes over.
   * Default 1000 ms, so that a failover takes about two seconds instead of the default's 15 s and more.
   */
  nodeTimeoutMs?: number;
  /** More redis-server options for every node, e.g. `['--maxmemory', '64mb']`. */
  extraArgs?: readonly string[];
}

interface OwnNode {
  port: number;
  /** Port of the cluster bus; set apart, because the default (port + 10000) may be taken or past 65535. */
  busPort: number;
  dir: string;
  child: ChildProcess | undefined;
}

function running(node: OwnNode): boolean {
  return node.child !== undefined && node.child.exitCode === null && node.child.signalCode === null;
}

/** Sends one command to one node over a connection of its own; never retries. */
async function nodeCommand(port: number, command: string, ...args: string[]): Promise<unknown> {
  const redis = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 1000, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return await redis.call(command, ...args);
  } finally {
    redis.disconnect();
  }
}

function infoField(info: string, name: string): string | undefined {
  return new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim();
}

/** Parses CLUSTER NODES (one line per node: id, ip:port@bus, flags, master, …, slots). */
export function parseClusterNodes(text: string): ClusterNodeView[] {
  return text
    .trim()
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [id, address, flags, master, , , , , ...slots] = line.trim().split(' ');
      const flagSet = new Set(flags!.split(','));
      return {
        id: id!,
        port: Number(/:(\d+)@/.exec(address!)?.[1] ?? 0),
        role: flagSet.has('master') ? 'master' : 'replica',
        failing: flagSet.has('fail') || flagSet.has('fail?'),
        masterId: master === '-' ? undefined : master,
        slots: slots.filter((s) => !s.startsWith('[')).map((s) => {
          const [from, to] = s.split('-').map(Number);
          return [from!, to ?? from!] as [number, number];
        }),
      } satisfies ClusterNodeView;
    });
}

/**
 * A Redis Cluster of the test's own: `masters` masters with `replicasPerMaster` replicas each, every
 * node a `redis-server --cluster-enabled yes` on free ports with its own data directory, joined by
 * `redis-cli --cluster create`. Stopped by PID; the machine's shared Redis is never touched.
 */
export class OwnRedisCluster {
  readonly dir = mkdtempSync(path.join(tmpdir(), 'tributary-cluster-'));
  private readonly nodes: OwnNode[] = [];
  private readonly killed = new Map<number, { id: string; replicaIds: string[] }>();
  /** Should the test process end without stop() (a crash, process.exit), its nodes and files still go. */
  private readonly killAllOnExit = () => {
    for (const node of this.nodes) node.child?.kill('SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
  };

  private constructor(private readonly opts: Required<OwnRedisClusterOptions>) {}

  static async start(options: OwnRedisClusterOptions = {}): Promise<OwnRedisCluster> {
    for (const binary of ['redis-server', 'redis-cli']) {
      if (spawnSync(binary, ['--version'], { stdio: 'ignore' }).error) throw new Error(`${binary} is not on PATH; the cluster tests need it (Debian/Ubuntu: apt-get install redis-server)`);
    }
    const cluster = new OwnRedisCluster({ masters: 3, replicasPerMaster: 1, appendonly: false, nodeTimeoutMs: 1000, extraArgs: [], ...options });
    try {
      await cluster.create();
    } catch (err) {
      await cluster.stop();
      throw err;
    }
    return cluster;
  }

  /** Every node, as seed nodes for a client. */
  get seeds(): Array<{ host: string; port: number }> {
    return this.nodes.map((n) => ({ host: '127.0.0.1', port: n.port }));
  }

  /** The seeds as REDIS_CLUSTER_NODES spells them. */
  get seedList(): string {
    return this.seeds.map((s) => `${s.host}:${s.port}`).join(',');
  }

  get ports(): number[] {
    return this.nodes.map((n) => n.port);
  }

  /** PID of each node's redis-server that is running. */
  get pids(): number[] {
    return this.nodes.flatMap((n) => (running(n) && n.child!.pid !== undefined ? [n.child!.pid] : []));
  }

  /** The topology as a running node sees it (the first one that answers), with each node's port and role. */
  async topology(): Promise<ClusterNodeView[]> {
    let lastError: unknown;
    for (const port of this.livePorts()) {
      try {
        return parseClusterNodes(String(await nodeCommand(port, 'CLUSTER', 'NODES')));
      } catch (err) {
        lastError = err;
      }
    }
    throw new Error(`no node of the cluster answered CLUSTER NODES: ${(lastError as Error | undefined)?.message}`);
  }

  async masterPorts(): Promise<number[]> {
    return (await this.topology()).filter((n) => n.role === 'master' && !n.failing && n.slots.length > 0).map((n) => n.port);
  }

  /** Port of the master that serves `key`'s slot now. */
  async masterPortFor(key: string): Promise<number> {
    const [port] = this.livePorts();
    const slot = Number(await nodeCommand(port!, 'CLUSTER', 'KEYSLOT', key));
    const owner = (await this.topology()).find((n) => n.role === 'master' && !n.failing && n.slots.some(([from, to]) => slot >= from && slot <= to));
    if (!owner) throw new Error(`no master serves slot ${slot} now`);
    return owner.port;
  }

  /** `kill -9` of a master's redis-server. Its replica takes over after `nodeTimeoutMs` or so: see waitForFailover. */
  async killMaster(port: number): Promise<void> {
    const topology = await this.topology();
    const master = topology.find((n) => n.port === port);
    if (!master || master.role !== 'master') throw new Error(`${port} is not a master of the cluster`);
    this.killed.set(port, { id: master.id, replicaIds: topology.filter((n) => n.masterId === master.id).map((n) => n.id) });
    const node = this.node(port);
    const child = node.child;
    if (!child || !running(node)) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  /**
   * SIGSTOP of a node: it keeps its connections but answers nothing (a replica stops acknowledging
   * writes, so WAIT times out) until `resume`. Paused past `nodeTimeoutMs`, the others mark it failed.
   */
  pause(port: number): void {
    this.node(port).child?.kill('SIGSTOP');
  }

  resume(port: number): void {
    this.node(port).child?.kill('SIGCONT');
  }

  /**
   * Waits until a replica of the master killed on `port` serves all its slots and every running node
   * says `cluster_state:ok` and agrees on who serves them. Resolves with the new master's port.
   */
  async waitForFailover(port: number, { timeoutMs = 20_000 } = {}): Promise<number> {
    const dead = this.killed.get(port);
    if (!dead) throw new Error(`no master was killed on ${port}`);
    return waitFor(
      async () => {
        try {
          let promoted: number | undefined;
          for (const live of this.livePorts()) {
            if (infoField(String(await nodeCommand(live, 'CLUSTER', 'INFO')), 'cluster_state') !== 'ok') return undefined;
            const view = parseClusterNodes(String(await nodeCommand(live, 'CLUSTER', 'NODES')));
            if (view.find((n) => n.id === dead.id)?.slots.length) return undefined;
            const heir = view.find((n) => dead.replicaIds.includes(n.id) && n.role === 'master' && n.slots.length > 0);
            if (!heir || (promoted !== undefined && heir.port !== promoted)) return undefined;
            promoted = heir.port;
          }
          return promoted;
        } catch {
          return undefined;
        }
      },
      { timeoutMs, intervalMs: 100, message: `a replica of the master on ${port} to take over` },
    );
  }

  /**
   * Starts a killed node again on its port and data directory. It rejoins as a replica of the
   * master that took its slots over (or as their master, when no replica had taken over yet).
   */
  async revive(port: number): Promise<void> {
    const node = this.node(port);
    if (running(node)) return;
    const dead = this.killed.get(port);
    this.spawnNode(node);
    this.killed.delete(port);
    await waitFor(
      async () => {
        try {
          const others = this.livePorts().filter((p) => p !== port);
          const views = await Promise.all(others.map(async (p) => parseClusterNodes(String(await nodeCommand(p, 'CLUSTER', 'NODES')))));
          const seen = views.map((view) => view.find((n) => n.id === dead?.id || n.port === port));
          if (seen.some((n) => n?.failing !== false)) return false;
          // A node whose slots were taken over restarts believing it is still their master, and
          // learns otherwise from gossip a moment later: only the others' view says which it is to be.
          const stillServesSlots = seen.every((n) => n!.role === 'master' && n!.slots.length > 0);
          const replication = String(await nodeCommand(port, 'INFO', 'replication'));
          if (stillServesSlots) return infoField(replication, 'role') === 'master';
          return seen.every((n) => n!.role === 'replica') && infoField(replication, 'role') === 'slave' && infoField(replication, 'master_link_status') === 'up';
        } catch {
          return false;
        }
      },
      { timeoutMs: 20_000, intervalMs: 100, message: `the node on ${port} to rejoin` },
    );
  }

  /** Kills every node (SIGKILL, by PID) and removes their data directories. Safe to call twice. */
  async stop(): Promise<void> {
    process.removeListener('exit', this.killAllOnExit);
    await Promise.all(
      this.nodes.map(async (node) => {
        const child = node.child;
        if (!child || !running(node)) return;
        node.child = undefined;
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await exited;
      }),
    );
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async create(): Promise<void> {
    const count = this.opts.masters * (1 + this.opts.replicasPerMaster);
    const taken = new Set<number>();
    const take = async (): Promise<number> => {
      for (;;) {
        const port = await freePort();
        if (!taken.has(port)) {
          taken.add(port);
          return port;
        }
      }
    };
    for (let i = 0; i < count; i++) {
      const port = await take();
      const dir = path.join(this.dir, String(port));
      mkdirSync(dir);
      this.nodes.push({ port, busPort: await take(), dir, child: undefined });
    }
    process.once('exit', this.killAllOnExit);
    for (const node of this.nodes) this.spawnNode(node);
    await waitFor(async () => (await Promise.all(this.nodes.map((n) => nodeCommand(n.port, 'PING').then(() => true, () => false)))).every(Boolean), {
      timeoutMs: 10_000,
      intervalMs: 50,
      message: 'every redis-server of the cluster to answer PING',
    }).catch((err: Error) => {
      throw new Error(`${err.message}\n${this.logTails()}`);
    });
    const addresses = this.nodes.map((n) => `127.0.0.1:${n.port}`);
    await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', String(this.opts.replicasPerMaster), '--cluster-yes'], { timeout: 30_000 }).catch((err: Error & { stdout?: string; stderr?: string }) => {
      throw new Error(`redis-cli --cluster create failed: ${err.message}\n${err.stdout ?? ''}${err.stderr ?? ''}\n${this.logTails()}`);
    });
    await waitFor(() => this.formed(count), { timeoutMs: 20_000, intervalMs: 100, message: 'cluster_state:ok on every node, every replica in sync' });
  }

  /**
   * Every node knows all the others, says cluster_state:ok and sees every replica as one (a replica
   * is a slotless master until its CLUSTER REPLICATE has spread by gossip, on a loaded machine for a
   * while after `cluster_state:ok`); every replica's link to its master is up.
   */
  private async formed(count: number): Promise<boolean> {
    const replicas = (count / (1 + this.opts.replicasPerMaster)) * this.opts.replicasPerMaster;
    try {
      for (const node of this.nodes) {
        const info = String(await nodeCommand(node.port, 'CLUSTER', 'INFO'));
        if (infoField(info, 'cluster_state') !== 'ok' || Number(infoField(info, 'cluster_known_nodes')) !== count) return false;
        const view = String(await nodeCommand(node.port, 'CLUSTER', 'NODES'));
        if (view.split('\n').filter((line) => line.split(' ')[2]?.split(',').includes('slave')).length !== replicas) return false;
        const replication = String(await nodeCommand(node.port, 'INFO', 'replication'));
        if (infoField(replication, 'role') === 'slave' && infoField(replication, 'master_link_status') !== 'up') return false;
      }
      return true;
    } catch {
      return false;
    }
  }

  private spawnNode(node: OwnNode): void {
    const args = [
      '--port', String(node.port),
      '--bind', '127.0.0.1',
      '--dir', node.dir,
      '--cluster-enabled', 'yes',
      '--cluster-config-file', 'nodes.conf',
      '--cluster-node-timeout', String(this.opts.nodeTimeoutMs),
      '--cluster-port', String(node.busPort),
      '--appendonly', this.opts.appendonly ? 'yes' : 'no',
      '--appendfsync', 'everysec',
      '--save', '',
      // A replica's first full sync waits 5 s by default for more replicas to share it.
      '--repl-diskless-sync-delay', '0',
      '--logfile', path.join(node.dir, 'redis.log'),
      ...this.opts.extraArgs,
    ];
    node.child = spawn('redis-server', args, { stdio: 'ignore' });
  }

  private node(port: number): OwnNode {
    const node = this.nodes.find((n) => n.port === port);
    if (!node) throw new Error(`no node of the cluster listens on ${port}`);
    return node;
  }

  private livePorts(): number[] {
    return this.nodes.filter(running).map((n) => n.port);
  }

  private logTails(): string {
    return this.nodes
      .map((n) => {
        let tail = '';
        try {
          tail = readFileSync(path.join(n.dir, 'redis.log'), 'utf8').split('\n').slice(-5).join('\n');
        } catch {
          // no log yet
        }
        return `--- node ${n.port}:\n${tail}`;
      })
      .join('\n');
  }
}
