import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from './redis';
import { SERVER } from './entries';
import { serverNodeFlags } from './start-flags';
import { waitFor } from './wait';

const ROOT = path.join(__dirname, '..', '..');

export interface TributaryProcess {
  child: ChildProcess;
  /** Everything the process printed on stdout so far. */
  output: () => string;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}

/**
 * Runs the relay with `role` as its own process, from the bundle of the sources that the run's
 * global setup made (test/helpers/entries.ts), so a stale build never hides a change, with the node
 * flags of the role's start script, as `npm start` runs it. The caller's env decides Redis, prefix,
 * port and data directory.
 */
export function spawnTributary(role: 'all' | 'api' | 'worker', env: Record<string, string>): TributaryProcess {
  const child = spawn(process.execPath, [...serverNodeFlags(role), SERVER, role], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    output: () => out + err,
    exited,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Waits until the API answers /readyz on `port`. */
export async function waitReady(port: number, proc: TributaryProcess, timeoutMs = 30_000): Promise<void> {
  await waitFor(
    async () => {
      if (proc.child.exitCode !== null) throw new Error(`tributary exited early:\n${proc.output()}`);
      try {
        return (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200;
      } catch {
        return false;
      }
    },
    { timeoutMs, intervalMs: 100, message: `tributary ready on ${port}` },
  );
}

type Role = 'all' | 'api' | 'worker';

export interface TributaryProcesses {
  /** The file's own Redis prefix (uniquePrefix) and data directory. */
  prefix: string;
  dataDir: string;
  /** A connection to the test Redis (BullMQ may use it: no retry limit). */
  redis: Redis;
  /** Every process `spawn` started, in order. */
  procs: TributaryProcess[];
  /** The environment of a process: Redis, prefix, data directory, the file's settings, then `extra`. */
  env: (extra?: Record<string, string>) => Record<string, string>;
  /** Starts `role` with `env(extra)`; it is killed after the file's tests. */
  spawn: (role: Role, extra?: Record<string, string>) => TributaryProcess;
}

/**
 * The setup of a test file that runs Tributary as processes on the test Redis: a prefix and a data
 * directory of the file's own, `settings` for every process (e.g. short leases), and, after all
 * its tests, every process killed with SIGKILL, the prefix deleted and the directory removed.
 */
export function tributaryProcesses(name: string, settings: Record<string, string> = {}): TributaryProcesses {
  const prefix = uniquePrefix(name);
  const dataDir = mkdtempSync(path.join(tmpdir(), `tributary-${name}-`));
  const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  const procs: TributaryProcess[] = [];
  const env = (extra: Record<string, string> = {}): Record<string, string> => ({ REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: prefix, DATA_DIR: dataDir, ...settings, ...extra });
  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop('SIGKILL')));
    await deletePrefix(prefix);
    redis.disconnect();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return {
    prefix,
    dataDir,
    redis,
    procs,
    env,
    spawn: (role, extra) => {
      const proc = spawnTributary(role, env(extra));
      procs.push(proc);
      return proc;
    },
  };
}
