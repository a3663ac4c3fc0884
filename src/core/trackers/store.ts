import type { RedisClient } from '../redis/cluster';
import { announceTrackerChange } from './changes';
import { generatePrivacySecret } from './privacy-rules';
import { tokenDigest } from './tokens';
import { TrackerSchema, type Tracker } from './types';

// Compare-and-set of one tracker and its token index. ARGV[1] is the JSON the caller read ('' when
// the tracker must not exist yet); the first ARGV[4] token keys are pointed at the tracker, the
// others deleted. A token already pointing at another tracker refuses the whole write.
const SAVE_IF = `
local current = redis.call('GET', KEYS[1])
if (ARGV[1] == '' and current) or (ARGV[1] ~= '' and current ~= ARGV[1]) then return 0 end
local active = tonumber(ARGV[4])
for i = 3, 2 + active do
  local owner = redis.call('GET', KEYS[i])
  if owner and owner ~= ARGV[3] then return -1 end
end
-- DEL first: a change replaces the tracker's JSON, so it runs on a full Redis (see "Writes at the limit", src/core/redis/out-of-memory.ts).
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[1], ARGV[2])
redis.call('SADD', KEYS[2], ARGV[3])
for i = 3, #KEYS do
  if i <= 2 + active then redis.call('SET', KEYS[i], ARGV[3]) else redis.call('DEL', KEYS[i]) end
end
return 1`;

export class TrackerConflictError extends Error {
  override name = 'TrackerConflictError';
}

/**
 * Trackers live in Redis as JSON, with one index key per active token digest.
 * Keys: `<prefix>:trackers` (set of ids), `<prefix>:tracker:<id>`, `<prefix>:token:<sha256>`.
 * Every write is a compare-and-set, so the CLI, the console and a config-file sync running at
 * once never lose each other's changes (nor bring back a revoked token).
 */
export class TrackerStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  private trackerKey(id: string): string {
    return `${this.prefix}:tracker:${id}`;
  }
  private tokenKey(digest: string): string {
    return `${this.prefix}:token:${digest}`;
  }
  private get indexKey(): string {
    return `${this.prefix}:trackers`;
  }

  async get(id: string): Promise<Tracker | undefined> {
    const json = await this.redis.get(this.trackerKey(id));
    return json === null ? undefined : TrackerSchema.parse(JSON.parse(json));
  }

  async list(): Promise<Tracker[]> {
    const ids = (await this.redis.smembers(this.indexKey)).sort();
    if (ids.length === 0) return [];
    const jsons = await this.redis.mget(ids.map((id) => this.trackerKey(id)));
    return jsons.flatMap((json) => (json === null ? [] : [TrackerSchema.parse(JSON.parse(json))]));
  }

  async trackerIdForToken(token: string): Promise<string | undefined> {
    return (await this.redis.get(this.tokenKey(tokenDigest(token)))) ?? undefined;
  }

  /**
   * 1 written, 0 the stored JSON was not `expected`, -1 a token belongs to another tracker; and
   * the tracker as written. Whichever door added the first `hash` rule, the secret is made here.
   */
  private async saveIf(expected: string, tracker: Tracker): Promise<{ result: number; saved: Tracker }> {
    const valid = TrackerSchema.parse(tracker);
    if (valid.privacySecret === undefined && valid.privacyRules.some((r) => r.action === 'hash')) valid.privacySecret = generatePrivacySecret();
    const active = valid.tokens.filter((t) => !t.revokedAt).map((t) => this.tokenKey(tokenDigest(t.token)));
    const revoked = valid.tokens.filter((t) => t.revokedAt).map((t) => this.tokenKey(tokenDigest(t.token)));
    const keys = [this.trackerKey(valid.id), this.indexKey, ...active, ...revoked];
    const result = (await this.redis.eval(SAVE_IF, keys.length, ...keys, expected, JSON.stringify(valid), valid.id, active.length)) as number;
    if (result === 1) await announceTrackerChange(this.redis, this.prefix, valid.id);
    return { result, saved: valid };
  }

  /** Creates the tracker unless its id or one of its tokens is taken. Returns false when taken. */
  async create(tracker: Tracker): Promise<boolean> {
    return (await this.saveIf('', tracker)).result === 1;
  }

  /**
   * Reads, changes and writes one tracker atomically, retrying when someone else wrote it in
   * between. Returns undefined when there is no such tracker.
   */
  async update(id: string, change: (current: Tracker) => Tracker | Promise<Tracker>): Promise<Tracker | undefined> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const json = await this.redis.get(this.trackerKey(id));
      if (json === null) return undefined;
      const next = await change(TrackerSchema.parse(JSON.parse(json)));
      const { result, saved } = await this.saveIf(json, next);
      if (result === 1) return saved;
      if (result === -1) throw new TrackerConflictError('A token of this tracker already belongs to another tracker.');
    }
    throw new TrackerConflictError(`Tracker ${id} is being changed by someone else; try again.`);
  }

  /** Writes the tracker whatever is stored (config-file sync: the file is the source of truth for what it declares). */
  async save(tracker: Tracker): Promise<void> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const json = (await this.redis.get(this.trackerKey(tracker.id))) ?? '';
      const { result } = await this.saveIf(json, tracker);
      if (result === 1) return;
      if (result === -1) throw new TrackerConflictError(`A token of tracker ${tracker.id} already belongs to another tracker.`);
    }
    throw new TrackerConflictError(`Tracker ${tracker.id} is being changed by someone else; try again.`);
  }

  async remove(id: string): Promise<boolean> {
    const tracker = await this.get(id);
    if (!tracker) return false;
    const tx = this.redis.multi().del(this.trackerKey(id)).srem(this.indexKey, id);
    for (const t of tracker.tokens) tx.del(this.tokenKey(tokenDigest(t.token)));
    await tx.exec();
    return true;
  }
}
