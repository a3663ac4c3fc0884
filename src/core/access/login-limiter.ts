import type { RedisClient } from '../redis/cluster';
import { tokenDigest } from '../trackers/tokens';
import { accessKeys, type AccessKeys } from './keys';

/**
 * Failed sign-ins counted per e-mail (guessing one person's password) and per client address
 * (trying many people), each over a window; past either limit, sign-ins from there are refused
 * until the window ends, whatever the password. A success clears the e-mail's count.
 */
export interface LoginLimits {
  perEmail: number;
  perAddress: number;
  windowSeconds: number;
}

export const DEFAULT_LOGIN_LIMITS: LoginLimits = { perEmail: 10, perAddress: 50, windowSeconds: 900 };

export class LoginLimiter {
  private readonly keys: AccessKeys;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
    private readonly limits: LoginLimits = DEFAULT_LOGIN_LIMITS,
  ) {
    this.keys = accessKeys(prefix);
  }

  private keysFor(email: string, address: string): [string, string] {
    return [this.keys.loginFailures(`e:${tokenDigest(email.trim().toLowerCase())}`), this.keys.loginFailures(`a:${address}`)];
  }

  /** Seconds to wait before trying again, or 0 when a sign-in may be tried. */
  async blockedFor(email: string, address: string): Promise<number> {
    const [byEmail, byAddress] = this.keysFor(email, address);
    const [e, a] = await this.redis.mget(byEmail, byAddress);
    const over = (Number(e ?? 0) >= this.limits.perEmail ? [byEmail] : []).concat(Number(a ?? 0) >= this.limits.perAddress ? [byAddress] : []);
    if (over.length === 0) return 0;
    const ttls = await Promise.all(over.map((k) => this.redis.ttl(k)));
    return Math.max(1, ...ttls);
  }

  async failed(email: string, address: string): Promise<void> {
    const tx = this.redis.multi();
    for (const key of this.keysFor(email, address)) tx.incr(key).expire(key, this.limits.windowSeconds, 'NX');
    await tx.exec();
  }

  async succeeded(email: string, address: string): Promise<void> {
    await this.redis.del(this.keysFor(email, address)[0]);
  }
}
