import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { answersPing } from '../../src/core/redis/embedded-redis';
import { freePort } from './ports';
import { waitFor } from './wait';

export { freePort };

/**
 * A redis-server of the test's own, on a free port with its own data directory, for tests that
 * stop, kill or restart Redis. Stopped by PID; the machine's shared Redis is never touched.
 */
export class OwnRedis {
  private child: ChildProcess | undefined;
  readonly dir = mkdtempSync(path.join(tmpdir(), 'tributary-redis-'));

  private constructor(
    readonly port: number,
    private readonly extraArgs: readonly string[],
  ) {}

  /** `extraArgs`: more redis-server options, e.g. `['--maxmemory', '32mb']` or `['--replicaof', '127.0.0.1', '6380']`. */
  static async start(extraArgs: readonly string[] = []): Promise<OwnRedis> {
    const own = new OwnRedis(await freePort(), extraArgs);
    await own.resume();
    return own;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts (again) on the same port and data directory; append-only, so data survives a restart. */
  async resume(): Promise<void> {
    this.child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--appendonly', 'yes', '--appendfsync', 'always', '--save', '', ...this.extraArgs], { stdio: 'ignore' });
    await waitFor(() => answersPing(this.url), { message: `redis-server on ${this.port}` });
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill(signal);
    await exited;
    this.child = undefined;
  }

  async destroy(): Promise<void> {
    await this.stop('SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
  }
}
