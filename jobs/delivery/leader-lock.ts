import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { RedisClient } from '../../src/core/redis/cluster';
import { LuaScript } from '../../src/core/redis/lua-script';

const RENEW = new LuaScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`);
// SET NX PX as a script whose first write is a DEL of the (absent) key, so a lease can still be
// taken on a full Redis (see "Writes at the limit", src/core/redis/out-of-memory.ts).
const ACQUIRE = new LuaScript(`if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`);
const RELEASE = new LuaScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`);

/**
 * A lease on one destination: whoever holds it is the only process delivering there, which is
 * what keeps updates to one key in order across workers. It is renewed every third of its TTL;
 * if the holder dies, another worker takes over once the TTL lapses.
 */
export class LeaderLock {
  /** Names the holder (host and pid) so an operator, or a test, can tell who delivers a destination. */
  readonly token = `${hostname()}:${process.pid}:${randomUUID()}`;
  private timer: NodeJS.Timeout | undefined;
  private readonly lost = new AbortController();

  constructor(
    private readonly redis: RedisClient,
    readonly key: string,
    private readonly ttlMs: number,
  ) {}

  /** Aborts when the lease is lost (expired under us, or Redis unreachable past the TTL). */
  get signal(): AbortSignal {
    return this.lost.signal;
  }

  async acquire(): Promise<boolean> {
    if ((await ACQUIRE.run(this.redis, 1, this.key, this.token, this.ttlMs)) !== 1) return false;
    let lastRenewed = Date.now();
    this.timer = setInterval(() => {
      RENEW.run(this.redis, 1, this.key, this.token, this.ttlMs)
        .then((renewed) => {
          if (renewed === 1) lastRenewed = Date.now();
          else this.lose('lease taken over');
        })
        .catch(() => {
          if (Date.now() - lastRenewed > this.ttlMs) this.lose('lease could not be renewed');
        });
    }, Math.max(50, Math.floor(this.ttlMs / 3)));
    this.timer.unref();
    return true;
  }

  /** Is the lease still ours? Asked right before a delivery is confirmed. */
  async holds(): Promise<boolean> {
    return (await this.redis.get(this.key)) === this.token;
  }

  async release(): Promise<void> {
    this.stop();
    await RELEASE.run(this.redis, 1, this.key, this.token).catch(() => undefined);
  }

  private lose(reason: string): void {
    this.stop();
    this.lost.abort(new Error(reason));
  }

  private stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
