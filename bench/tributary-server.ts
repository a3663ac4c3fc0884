import cluster, { type Worker } from 'node:cluster';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/logger';
import { createApiRuntime } from '../src/runtime';
import { TrackerStore } from '../src/trackers/store';
import { TrackerSchema } from '../src/trackers/types';
import { failToParent, tellParent, type Message } from './child';

/** A tracker the benchmark creates in the store before the load starts. */
export interface BenchTracker {
  id: string;
  token: string;
}

interface Stats {
  active: number;
  /** 2xx answers per tracker id. */
  accepted: Record<string, number>;
}

const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const trackers = JSON.parse(process.env.BENCH_TRACKERS ?? '[]') as BenchTracker[];
const workers = Number(process.env.BENCH_WORKERS ?? '1');
const config = loadConfig({ LOG_LEVEL: 'warn', ...process.env, REDIS_PREFIX: process.env.BENCH_PREFIX!, HOST: '127.0.0.1', PORT: '0' });

async function createTrackers(store: TrackerStore): Promise<void> {
  for (const t of trackers) {
    const created = await store.create(TrackerSchema.parse({ id: t.id, name: `Benchmark ${t.id}`, tokens: [{ token: t.token }] }));
    if (!created) throw new Error(`tracker ${t.id} exists already under ${config.redisPrefix}`);
  }
}

/**
 * Tributary's real HTTP edge, built by createApiRuntime as server.ts builds it, on a free port of
 * 127.0.0.1 and under the benchmark's own Redis prefix. It counts the 2xx answers it gave per
 * token, so the benchmark can check them against the records found in Redis. `send` reaches
 * the benchmark, or the cluster primary when several processes serve the port.
 */
async function serve(send: (msg: Message) => void, onMessage: (handler: (msg: Message) => void) => void, withTrackers: boolean): Promise<void> {
  const runtime = createApiRuntime(config, redisUrl, createLogger(config.logLevel));
  await runtime.queue.waitUntilReady();
  if (withTrackers) await createTrackers(runtime.store);

  const handle = runtime.app.callback();
  const accepted = new Map<string, number>();
  let active = 0;
  const server = createServer((req, res) => {
    active++;
    // Koa's handler settles once the status is decided and the answer written (or the socket gone).
    void handle(req, res).finally(() => {
      active--;
      if (res.statusCode >= 200 && res.statusCode < 300) {
        const key = req.headers.authorization ?? '';
        accepted.set(key, (accepted.get(key) ?? 0) + 1);
      }
    });
  });
  server.keepAliveTimeout = 65_000;

  onMessage((msg) => {
    if (msg.type === 'stats') {
      const stats: Stats = { active, accepted: Object.fromEntries(trackers.map((t) => [t.id, accepted.get(`Tracker ${t.token}`) ?? 0])) };
      send({ type: 'stats', ...stats });
    } else if (msg.type === 'stop') {
      server.close();
      server.closeAllConnections();
      void runtime.close().then(() => process.exit(0), failToParent);
    }
  });
  server.on('error', failToParent);
  server.listen(0, '127.0.0.1', () => send({ type: 'listening', port: (server.address() as AddressInfo).port, pid: process.pid }));
}

function ask(worker: Worker, msg: Message, type: string): Promise<Message> {
  return new Promise((resolve) => {
    const onMessage = (reply: Message) => {
      if (reply.type !== type) return;
      worker.off('message', onMessage);
      resolve(reply);
    };
    worker.on('message', onMessage);
    worker.send(msg);
  });
}

/** Several processes on one port (node:cluster), each with its own runtime, as a deployment could run them. */
async function primary(): Promise<void> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  await createTrackers(new TrackerStore(redis, config.redisPrefix));
  redis.disconnect();
  const pool = Array.from({ length: workers }, () => cluster.fork());
  const ready = await Promise.all(pool.map((w) => new Promise<Message>((resolve) => w.once('message', resolve))));
  for (const r of ready) if (r.type !== 'listening') throw new Error(`a worker failed to start: ${String(r.message)}`);
  process.on('message', (msg: Message) => {
    if (msg.type === 'stats') {
      void Promise.all(pool.map((w) => ask(w, msg, 'stats'))).then((all) => {
        const total: Stats = { active: 0, accepted: {} };
        for (const s of all as unknown as Stats[]) {
          total.active += s.active;
          for (const [id, n] of Object.entries(s.accepted)) total.accepted[id] = (total.accepted[id] ?? 0) + n;
        }
        tellParent({ type: 'stats', ...total });
      });
    } else if (msg.type === 'stop') {
      for (const w of pool) w.send(msg);
      void Promise.all(pool.map((w) => new Promise((resolve) => w.once('exit', resolve)))).then(() => process.exit(0));
    }
  });
  tellParent({ type: 'listening', port: ready[0]!.port, pids: [process.pid, ...ready.map((r) => r.pid)] });
}

const onParentMessage = (handler: (msg: Message) => void) => process.on('message', handler);
const main = workers <= 1 ? serve(tellParent, onParentMessage, true) : cluster.isPrimary ? primary() : serve((msg) => process.send?.(msg), onParentMessage, false);
main.catch(failToParent);
