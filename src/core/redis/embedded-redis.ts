import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { Redis } from 'ioredis';

export interface RedisEndpoint {
  url: string;
  /** True when this process started the redis-server and stops it on exit. */
  owned: boolean;
  stop: () => Promise<void>;
}

export class EmbeddedRedisError extends Error {
  override name = 'EmbeddedRedisError';
}

const INSTALL_HINT =
  'No REDIS_URL is set and no redis-server binary was found on PATH. Either install Redis ' +
  '(Debian/Ubuntu: `sudo apt-get install redis-server`; macOS: `brew install redis`) or point Tributary at one: REDIS_URL=redis://host:6379.';

/** True when a Redis at `url` answers PING now; never retries. */
export async function answersPing(url: string): Promise<boolean> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 1000, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

/** A TCP port free on 127.0.0.1 right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/**
 * The Redis that Tributary uses: `REDIS_URL` when set; otherwise the embedded one under
 * `DATA_DIR/redis` — reused when already running (its URL is in `DATA_DIR/redis/url`), else started
 * here with append-only persistence (fsync every second, Redis's own recommendation).
 *
 * `probe` tells whether a URL answers (default: a throwaway connection that pings); a caller that
 * probes with the connection it goes on to use opens one connection instead of two.
 */
export async function ensureRedis(redisUrl: string | undefined, dataDir: string, probe: (url: string) => Promise<boolean> = answersPing): Promise<RedisEndpoint> {
  const noop = async () => undefined;
  if (redisUrl) return { url: redisUrl, owned: false, stop: noop };

  const dir = path.join(dataDir, 'redis');
  const urlFile = path.join(dir, 'url');
  mkdirSync(dir, { recursive: true });
  try {
    const url = readFileSync(urlFile, 'utf8').trim();
    if (await probe(url)) return { url, owned: false, stop: noop };
  } catch {
    // No running embedded Redis: start one below.
  }

  if (spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).error) throw new EmbeddedRedisError(INSTALL_HINT);
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--appendfsync', 'everysec', '--save', '', '--logfile', path.join(dir, 'redis.log')],
    { stdio: 'ignore', detached: false },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 10_000;
  while (!(await probe(url))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      let log = '';
      try {
        log = readFileSync(path.join(dir, 'redis.log'), 'utf8').split('\n').slice(-5).join('\n');
      } catch {
        // no log yet
      }
      throw new EmbeddedRedisError(`The embedded redis-server did not start (data in ${dir}). Last log lines:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  writeFileSync(urlFile, `${url}\n`);
  return {
    url,
    owned: true,
    stop: async () => {
      rmSync(urlFile, { force: true });
      // SIGTERM makes redis-server flush its append-only file and exit cleanly.
      child.kill('SIGTERM');
      await exited;
    },
  };
}
