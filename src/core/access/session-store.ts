import { randomBytes } from 'node:crypto';
import * as z from 'zod';
import type { RedisClient } from '../redis/cluster';
import { tokenDigest } from '../trackers/tokens';
import { accessKeys, type AccessKeys } from './keys';

/**
 * A console session: an opaque id in the cookie, this record in Redis under the id's digest (a copy
 * of Redis holds no usable cookie). It expires when idle (the key's TTL, renewed on use) and at an
 * absolute time, and dies with its person's epoch (a new password or another role).
 */
export const SessionSchema = z.object({
  /** A person's id, or `break-glass` for a session opened with the admin token. */
  subject: z.string(),
  epoch: z.number().int(),
  createdAt: z.string(),
  expiresAt: z.string(),
  from: z.string().optional(),
});
export type Session = z.infer<typeof SessionSchema>;

export const BREAK_GLASS_SUBJECT = 'break-glass';

export interface SessionLimits {
  /** Ends after this long without a request. */
  idleMs: number;
  /** Ends this long after sign-in, however busy. */
  absoluteMs: number;
}

export class SessionStore {
  private readonly keys: AccessKeys;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
    private readonly limits: SessionLimits,
  ) {
    this.keys = accessKeys(prefix);
  }

  /** Opens a session; returns its id, which only the cookie holds. */
  async open(subject: string, epoch: number, from?: string): Promise<{ id: string; session: Session }> {
    const id = randomBytes(32).toString('base64url');
    const now = Date.now();
    const session: Session = { subject, epoch, createdAt: new Date(now).toISOString(), expiresAt: new Date(now + this.limits.absoluteMs).toISOString(), ...(from ? { from } : {}) };
    await this.redis.set(this.keys.session(tokenDigest(id)), JSON.stringify(session), 'PX', Math.min(this.limits.idleMs, this.limits.absoluteMs));
    return { id, session };
  }

  /** The session, its idle time renewed; undefined when unknown, idle too long or past its absolute end. */
  async use(id: string): Promise<Session | undefined> {
    const key = this.keys.session(tokenDigest(id));
    const json = await this.redis.get(key);
    if (json === null) return undefined;
    const session = SessionSchema.parse(JSON.parse(json));
    const left = Date.parse(session.expiresAt) - Date.now();
    if (left <= 0) {
      await this.redis.del(key);
      return undefined;
    }
    await this.redis.pexpire(key, Math.min(this.limits.idleMs, left));
    return session;
  }

  async end(id: string): Promise<void> {
    await this.redis.del(this.keys.session(tokenDigest(id)));
  }
}
