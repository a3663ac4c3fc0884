import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
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
 * Runs `src/boot/server.ts <role>` as its own process, straight from the sources (so a stale build
 * never hides a change). The caller's env decides Redis, prefix, port and data directory.
 */
export function spawnTributary(role: 'all' | 'api' | 'worker', env: Record<string, string>): TributaryProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src', 'boot', 'server.ts'), role], {
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
