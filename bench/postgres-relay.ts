import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';
import { deliveryKeys } from '../jobs/delivery/keys';
import type { TestDatabase } from '../test/helpers/postgres';

/**
 * What bench:postgres and bench:postgres-check share: records sent to a relay as a client sends
 * them, delivery counted from Redis, PostgreSQL's own CPU, and psql.
 */

/** LIMIT_RECORDS_PER_REQUEST's default. */
export const RECORDS_PER_REQUEST = 500;

export interface Sent {
  /** Records the relay stored (its answers' `accepted`). */
  accepted: number;
  /** Records it answered as duplicates of keys it had accepted before. */
  duplicates: number;
}

/**
 * Posts `records` to `path` in arrays of RECORDS_PER_REQUEST, `concurrency` requests at a time, in
 * order within each lane. `resend(i)`: request i is sent a second time after its answer, as a
 * client that lost the answer would. Any answer other than 200 or 202 throws.
 */
export async function postRecords(base: string, token: string, path: string, records: readonly unknown[], options: { concurrency?: number; resend?: (request: number) => boolean } = {}): Promise<Sent> {
  const bodies: string[] = [];
  for (let i = 0; i < records.length; i += RECORDS_PER_REQUEST) bodies.push(JSON.stringify(records.slice(i, i + RECORDS_PER_REQUEST)));
  const sent: Sent = { accepted: 0, duplicates: 0 };
  const post = async (body: string) => {
    const res = await fetch(`${base}${path}`, { method: 'POST', headers: { Authorization: `Tracker ${token}`, 'Content-Type': 'application/json' }, body });
    const text = await res.text();
    if (res.status !== 202 && res.status !== 200) throw new Error(`${path} answered ${res.status}: ${text.slice(0, 500)}`);
    const answer = JSON.parse(text) as { accepted: number; duplicates?: number };
    sent.accepted += answer.accepted;
    sent.duplicates += answer.duplicates ?? 0;
  };
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < bodies.length; i = next++) {
      await post(bodies[i]!);
      if (options.resend?.(i)) await post(bodies[i]!);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency ?? 4 }, lane));
  return sent;
}

/** A destination's counters in Redis (tracker partition 0, one shard: how startTributary runs it). */
export function destinationCounters(redis: Redis, prefix: string, trackerId: string, destinationId: string) {
  const keys = deliveryKeys(prefix, { trackerId, destinationId });
  return {
    delivered: async () => Number((await redis.hget(keys.status, 'delivered')) ?? 0),
    deadLettered: async () => redis.xlen(keys.deadLetters),
    queued: async () => Number((await redis.get(keys.queued)) ?? 0),
    lastError: async () => redis.hget(keys.status, 'lastError'),
    /** Why delivery is paused (a configuration error), or null. */
    paused: async () => redis.hget(keys.status, 'paused'),
  };
}

/**
 * Waits until `count()` reaches `target`, saying how far it got if it does not within `timeoutMs`,
 * or as soon as `failure()` names a reason to stop waiting (a destination paused).
 */
export async function waitForCount(what: string, count: () => Promise<number>, target: number, timeoutMs: number, options: { intervalMs?: number; failure?: () => Promise<string | null | undefined> } = {}): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const n = await count();
    if (n >= target) return;
    const failure = await options.failure?.();
    if (failure) throw new Error(`${what}: ${failure} (${n} of ${target})`);
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms (${n} of ${target})`);
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 50));
  }
}

const USER_HZ = 100;

/**
 * CPU seconds used so far by every process named `postgres` on this machine: the backends that
 * serve the connections, and the WAL writer, background writer and checkpointer that their writes
 * bring. Processes that ended meanwhile are not counted (a backend of a closed connection).
 */
export function postgresCpuSeconds(): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const open = stat.indexOf('(');
      const close = stat.lastIndexOf(')');
      if (stat.slice(open + 1, close) !== 'postgres') continue;
      const fields = stat.slice(close + 2).split(' ');
      total += (Number(fields[11]) + Number(fields[12])) / USER_HZ;
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return total;
}

/** A libpq connection string for psql, as the test database's own role. */
export function psqlUrl(db: TestDatabase): string {
  const s = db.settings;
  return `postgresql://${encodeURIComponent(s.user)}@${s.host}:${s.port}/${encodeURIComponent(s.database)}`;
}

/** Runs `sql` with psql (unaligned, no psqlrc) and returns what it printed. */
export function psql(url: string, sql: string, args: string[] = []): string {
  return execFileSync('psql', [url, '-X', '-v', 'ON_ERROR_STOP=1', ...args, '-c', sql], { encoding: 'utf8' });
}
