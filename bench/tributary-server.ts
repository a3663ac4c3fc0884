import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Redis } from 'ioredis';
import { freePort } from '../src/core/redis/embedded-redis';
import { TrackerStore } from '../src/core/trackers/store';
import { TrackerSchema } from '../src/core/trackers/types';
import { compiledPath, serverNodeFlags, stopChild } from './child';

/** A tracker the benchmark creates in the store before the load starts. */
export interface BenchTracker {
  id: string;
  token: string;
  /** Its destinations (TrackerSchema's form); none by default, so records stay in the ingest queue. */
  destinations?: unknown[];
  /** Other tracker settings (TrackerSchema's form), e.g. `privacyRules`. */
  settings?: Record<string, unknown>;
}

/** What the server's aggregated /metrics says about POST /v3/event. */
export interface ServerCounts {
  /** 202 answers. */
  answered: number;
  /** Records stored and answered (tributary_records_accepted_total, kind event). */
  records: number;
}

export interface TributaryServer {
  port: number;
  /** The server's DATA_DIR (a temporary directory, removed by `stop`). */
  dataDir: string;
  /** The primary (with API_PROCESSES > 1) and every API process: their CPU is the server's. */
  pids: number[];
  counts: () => Promise<ServerCounts>;
  /** The text of its /metrics now (read it with `metric`). */
  metrics: () => Promise<string>;
  /** Counts once no request is under way any more (two equal readings 250 ms apart). */
  idleCounts: () => Promise<ServerCounts>;
  /** SIGTERM, as a deployment stops it; resolves with the exit code. `keepData` leaves DATA_DIR for the caller to read and remove. */
  stop: (options?: { keepData?: boolean }) => Promise<number | null>;
}

function get(port: number, urlPath: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    // A connection of its own: node:cluster hands each new connection to the next API process.
    const req = request({ host: '127.0.0.1', port, path: urlPath, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The value of one line of a /metrics text, e.g. `nodejs_eventloop_lag_p99_seconds`; 0 when absent. */
export function metric(text: string, line: string): number {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? 0 : Number(found.slice(line.length + 1));
}

/** `check()` until it answers something (a throw counts as not yet); throws after `timeoutMs`. */
export async function poll<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 60_000, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * Tributary as a deployment runs it: `node src/boot/server.js api` (compiled by buildChildren) with
 * API_PROCESSES processes, on a free port of 127.0.0.1, under the benchmark's Redis prefix, with
 * the benchmark's trackers created first. The 2xx answers and stored records are read from its
 * /metrics, which sums every API process.
 */
/**
 * `env`: settings of the server's own beside the benchmark's (bench:ab's `--a-env`, `--b-env`).
 * `role`: `api` (`npm run start:api`, the default) or `all` (`npm start`: the API and the workers
 * delivering in one process).
 */
export async function startTributary(options: { redis: Redis; redisUrl: string; prefix: string; trackers: BenchTracker[]; processes: number; nodeArgs: string[]; env?: Record<string, string>; role?: 'api' | 'all' }): Promise<TributaryServer> {
  const role = options.role ?? 'api';
  const store = new TrackerStore(options.redis, options.prefix);
  for (const t of options.trackers) {
    const created = await store.create(TrackerSchema.parse({ ...t.settings, id: t.id, name: `Benchmark ${t.id}`, tokens: [{ token: t.token }], destinations: t.destinations ?? [] }));
    if (!created) throw new Error(`tracker ${t.id} exists already under ${options.prefix}`);
  }
  const port = await freePort();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'bench-ingest-'));
  const child: ChildProcess = spawn(process.execPath, [...serverNodeFlags(role), ...options.nodeArgs, compiledPath('src/boot/server.ts'), role], {
    env: {
      ...process.env,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
      REDIS_URL: options.redisUrl,
      REDIS_PREFIX: options.prefix,
      HOST: '127.0.0.1',
      PORT: String(port),
      API_PROCESSES: String(options.processes),
      DATA_DIR: dataDir,
      ADMIN_TOKEN: `adm_${randomBytes(24).toString('base64url')}`,
      TRIBUTARY_CONFIG: '',
      PUBLIC_URL: '',
      ...options.env,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const cleanup = () => rmSync(dataDir, { recursive: true, force: true });
  try {
    const pids = await poll(`${options.processes} API processes answering /healthz`, async () => {
      if (child.exitCode !== null) throw new Error('the server exited');
      const seen = new Set<number>();
      for (let i = 0; i < options.processes * 2; i++) {
        const res = await get(port, '/healthz');
        if (res.status === 200) seen.add((JSON.parse(res.body) as { pid: number }).pid);
      }
      return seen.size === options.processes ? [...seen] : undefined;
    });
    if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode})`);
    const metrics = async (): Promise<string> => {
      const res = await get(port, '/metrics');
      if (res.status !== 200) throw new Error(`/metrics answered ${res.status}: ${res.body}`);
      return res.body;
    };
    const counts = async (): Promise<ServerCounts> => {
      const text = await metrics();
      return {
        answered: metric(text, 'tributary_http_requests_total{endpoint="/v3/event",method="POST",status="202"}'),
        records: metric(text, 'tributary_records_accepted_total{kind="event"}'),
      };
    };
    return {
      port,
      dataDir,
      pids: options.processes > 1 ? [child.pid!, ...pids] : pids,
      counts,
      metrics,
      idleCounts: async () => {
        let last = await counts();
        for (const deadline = Date.now() + 30_000; Date.now() < deadline; ) {
          await new Promise((r) => setTimeout(r, 250));
          const now = await counts();
          if (now.answered === last.answered && now.records === last.records) return now;
          last = now;
        }
        throw new Error('the server did not become idle within 30 s');
      },
      stop: async (stopOptions) => {
        if (child.exitCode === null) child.kill('SIGTERM');
        await stopChild(child);
        if (!stopOptions?.keepData) cleanup();
        return exited;
      },
    };
  } catch (err) {
    child.kill('SIGKILL');
    cleanup();
    throw err;
  }
}

/**
 * A delivery worker as `npm run start:worker` runs it (the compiled server, role `worker`) for a
 * benchmark's API under `prefix`, sharing its DATA_DIR (stop it before the API, whose stop removes
 * that directory). `nodeArgs` go after the start script's flags (e.g. `--cpu-prof`).
 */
export function spawnBenchWorker(redisUrl: string, prefix: string, dataDir: string, nodeArgs: string[] = []): ChildProcess {
  return spawn(process.execPath, [...serverNodeFlags('worker'), ...nodeArgs, compiledPath('src/boot/server.ts'), 'worker'], {
    env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn', REDIS_URL: redisUrl, REDIS_PREFIX: prefix, DATA_DIR: dataDir, TRIBUTARY_CONFIG: '' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}
