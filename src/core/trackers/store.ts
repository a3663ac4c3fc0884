import type { RedisClient } from '../redis/cluster';
import { checkKeyring, forgetKeyCheck } from '../secrets/key-checks';
import type { SecretKeys } from '../secrets/key-file';
import type { Keyring } from '../secrets/keyring';
import { openSecrets, sealSecrets, secretSlots, StoredSecretError, storedSecrets, type StoredSecret } from '../secrets/tracker-secrets';
import { noteChange } from '../access/audit-context';
import { announceTrackerChange } from './changes';
import { generatePrivacySecret } from './privacy-rules';
import { tokenDigest } from './tokens';
import { TrackerSchema, type Tracker } from './types';
import { LuaScript } from '../redis/lua-script';
import * as z from 'zod';

// Compare-and-set of one tracker and its token index. ARGV[1] is the JSON the caller read ('' when
// the tracker must not exist yet); the first ARGV[4] token keys are pointed at the tracker, the
// others deleted. A token already pointing at another tracker refuses the whole write.
const SAVE_IF = new LuaScript(`
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
return 1`);

/**
 * How long a removed tracker's mark stays: its records still queued are discarded when they are
 * routed within it (a week covers workers stopped for a long while); later, with no tracker of that
 * id, they would wait in its backlog as any unknown tracker's do.
 */
export const REMOVED_MARK_SECONDS = 7 * 86_400;

export class TrackerConflictError extends Error {
  override name = 'TrackerConflictError';
}

/**
 * A stored tracker this process cannot read: its secrets do not open (a key the key file does not
 * hold, a value altered in Redis) or its JSON is not a tracker (a hand edit, or a later relay's
 * tracker read by an earlier one). `reason` is for operators: it may name a key id and a field.
 */
export interface UnreadableTracker {
  id: string;
  reason: string;
}

/** Every stored tracker: those this process reads, and those it cannot, kept apart. */
export interface StoredTrackers {
  trackers: Tracker[];
  unreadable: UnreadableTracker[];
}

/** A stored tracker whose JSON is not a tracker (a hand edit, or a later relay's tracker read by an earlier one). */
export class UnreadableTrackerError extends Error {
  override name = 'UnreadableTrackerError';
  constructor(
    readonly trackerId: string,
    readonly reason: string,
  ) {
    super(`tracker ${trackerId} cannot be read: ${reason}`);
  }
}

/** What makes one tracker unreadable (rather than every tracker, as Redis or the key file failing does). */
export function isUnreadableTracker(err: unknown): err is UnreadableTrackerError | StoredSecretError {
  return err instanceof UnreadableTrackerError || err instanceof StoredSecretError;
}

function notATracker(id: string, err: unknown): UnreadableTrackerError {
  if (err instanceof z.ZodError) return new UnreadableTrackerError(id, `its stored JSON is not a tracker (${err.issues.map((i) => `${i.path.join('.') || 'the whole'}: ${i.message}`).join('; ')})`);
  return new UnreadableTrackerError(id, `its stored JSON does not parse (${(err as Error).message})`);
}

function readJson(id: string, json: string): unknown {
  try {
    return JSON.parse(json) as unknown;
  } catch (err) {
    throw notATracker(id, err);
  }
}

/** A stored tracker's top-level fields, whatever its JSON holds: none when it is not an object (removal reads what it can). */
function storedFields(json: string): Record<string, unknown> {
  try {
    const value = JSON.parse(json) as unknown;
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function asTracker(id: string, stored: unknown): Tracker {
  const tracker = TrackerSchema.safeParse(stored);
  if (!tracker.success) throw notATracker(id, tracker.error);
  return tracker.data;
}

/**
 * Trackers live in Redis as JSON, with one index key per active token digest.
 * Keys: `<prefix>:trackers` (set of ids), `<prefix>:tracker:<id>`, `<prefix>:token:<sha256>`.
 * Every write is a compare-and-set, so the CLI, the console and a config-file sync running at
 * once never lose each other's changes (nor bring back a revoked token).
 *
 * Secrets (webhook signing secrets, the personal-data HMAC key, destinations' passwords and keys:
 * src/core/secrets/tracker-secrets.ts) are sealed with `secrets` on the way in and opened on the
 * way out: everything above the store sees them plain, in memory only. A store given no keys
 * writes them plain and cannot read sealed ones (tests, benchmarks).
 */
export class TrackerStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly secrets?: SecretKeys,
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
  private removedKey(id: string): string {
    return `${this.prefix}:tracker-removed:${id}`;
  }

  /**
   * A stored tracker as it is in memory, its secrets opened. A value under a key this process has
   * not loaded sends it to read the key file again first: another process may have just made a new
   * key current, and a reader must not fail for having looked at the file a moment earlier.
   */
  private async parse(id: string, json: string): Promise<Tracker> {
    const stored = readJson(id, json);
    // Read-only commands on trackers with nothing sealed never need the key file.
    if (!storedSecrets(id, stored).some((s) => s.keyId !== null)) return asTracker(id, stored);
    try {
      openSecrets(id, stored, await this.secrets?.keyring(), this.secrets?.source);
    } catch (err) {
      if (!(err instanceof StoredSecretError && err.reason === 'unknown-key' && this.secrets)) throw err;
      const again = readJson(id, json);
      openSecrets(id, again, await this.secrets.refresh(), this.secrets.source);
      return asTracker(id, again);
    }
    return asTracker(id, stored);
  }

  /** The JSON text to store: the tracker with its secrets sealed under the current key. */
  private async serialize(tracker: Tracker): Promise<string> {
    // A tracker without secrets needs no key: a process that never stores one never reads the key file.
    if (!this.secrets || secretSlots(tracker).length === 0) return JSON.stringify(tracker);
    const copy = JSON.parse(JSON.stringify(tracker)) as unknown;
    sealSecrets(tracker.id, copy, await this.checkKeys());
    return JSON.stringify(copy);
  }

  private readonly checkedKeyrings = new WeakSet<Keyring>();

  /**
   * The keys to seal with, once checked to be the relay's (src/core/secrets/key-checks.ts): each
   * keyring the key file gives is checked once, before its first use.
   */
  async checkKeys(): Promise<Keyring> {
    if (!this.secrets) throw new Error('this tracker store was given no keys');
    const keyring = await this.secrets.keyring();
    if (!this.checkedKeyrings.has(keyring)) {
      await checkKeyring(this.redis, this.prefix, keyring, this.secrets.source);
      this.checkedKeyrings.add(keyring);
    }
    return keyring;
  }

  /** Forgets a key dropped from the key file, so that an old copy of the file holding only it is refused. */
  async forgetKey(keyId: string): Promise<void> {
    await forgetKeyCheck(this.redis, this.prefix, keyId);
  }

  async get(id: string): Promise<Tracker | undefined> {
    const json = await this.redis.get(this.trackerKey(id));
    return json === null ? undefined : this.parse(id, json);
  }

  /** The ids of every tracker, sorted. */
  async ids(): Promise<string[]> {
    return (await this.redis.smembers(this.indexKey)).sort();
  }

  /**
   * Every tracker, read one by one: one that cannot be read (isUnreadableTracker) is reported beside
   * the others rather than failing them all, so that a single bad tracker cannot stop delivery, the
   * console or the CLI for every other one. Redis or the key file failing still throws.
   */
  async list(): Promise<StoredTrackers> {
    const ids = await this.ids();
    if (ids.length === 0) return { trackers: [], unreadable: [] };
    const jsons = await this.redis.mget(ids.map((id) => this.trackerKey(id)));
    const read = await Promise.all(
      jsons.map((json, i) =>
        json === null
          ? undefined
          : this.parse(ids[i]!, json).then(
              (tracker) => ({ tracker }),
              (err: unknown) => {
                if (!isUnreadableTracker(err)) throw err;
                return { unreadable: { id: ids[i]!, reason: err instanceof UnreadableTrackerError ? err.reason : err.message } };
              },
            ),
      ),
    );
    const out: StoredTrackers = { trackers: [], unreadable: [] };
    for (const r of read) {
      if (r && 'tracker' in r) out.trackers.push(r.tracker);
      else if (r) out.unreadable.push(r.unreadable);
    }
    return out;
  }

  /** Every stored secret and the key it is sealed under (null: still plain), read without opening any. */
  async secretsInventory(): Promise<StoredSecret[]> {
    const ids = await this.ids();
    if (ids.length === 0) return [];
    const jsons = await this.redis.mget(ids.map((id) => this.trackerKey(id)));
    return jsons.flatMap((json, i) => (json === null ? [] : storedSecrets(ids[i]!, JSON.parse(json))));
  }

  async trackerIdForToken(token: string): Promise<string | undefined> {
    return (await this.redis.get(this.tokenKey(tokenDigest(token)))) ?? undefined;
  }

  /**
   * 1 written, 0 the stored JSON was not `expected`, -1 a token belongs to another tracker; and
   * the tracker as written. Whichever door added the first `hash` rule, the secret is made here.
   */
  private async saveIf(expected: string, tracker: Tracker, before?: Tracker): Promise<{ result: number; saved: Tracker }> {
    const valid = TrackerSchema.parse(tracker);
    if (valid.privacySecret === undefined && valid.privacyRules.some((r) => r.action === 'hash')) valid.privacySecret = generatePrivacySecret();
    const active = valid.tokens.filter((t) => !t.revokedAt).map((t) => this.tokenKey(tokenDigest(t.token)));
    const revoked = valid.tokens.filter((t) => t.revokedAt).map((t) => this.tokenKey(tokenDigest(t.token)));
    const keys = [this.trackerKey(valid.id), this.indexKey, ...active, ...revoked];
    const result = (await SAVE_IF.run(this.redis, keys.length, ...keys, expected, await this.serialize(valid), valid.id, active.length)) as number;
    if (result === 1) {
      // Into the audit entry of the action in progress, if one is (src/core/access/audit-context.ts).
      noteChange(`tracker ${valid.id}`, before, valid);
      await announceTrackerChange(this.redis, this.prefix, valid.id);
    }
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
      const current = await this.parse(id, json);
      const before = structuredClone(current);
      const { result, saved } = await this.saveIf(json, await change(current), before);
      if (result === 1) return saved;
      if (result === -1) throw new TrackerConflictError('A token of this tracker already belongs to another tracker.');
    }
    throw new TrackerConflictError(`Tracker ${id} is being changed by someone else; try again.`);
  }

  /** Writes the tracker whatever is stored (config-file sync: the file is the source of truth for what it declares). */
  async save(tracker: Tracker): Promise<void> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const json = (await this.redis.get(this.trackerKey(tracker.id))) ?? '';
      const before = json === '' ? undefined : await this.parse(tracker.id, json);
      const { result } = await this.saveIf(json, tracker, before);
      if (result === 1) return;
      if (result === -1) throw new TrackerConflictError(`A token of tracker ${tracker.id} already belongs to another tracker.`);
    }
    throw new TrackerConflictError(`Tracker ${tracker.id} is being changed by someone else; try again.`);
  }

  /**
   * Writes a tracker again, every secret sealed under the current key, when `stale` says its stored
   * secrets need it (plain ones at a start; those under an older key for `secrets reencrypt`);
   * `change` may alter it on the way. Through the compare-and-set: of several processes doing this
   * at once, one writes and the others then find nothing stale. Returns whether it wrote.
   */
  async reseal(id: string, stale: (stored: readonly StoredSecret[], tracker: Tracker) => boolean, change: (tracker: Tracker) => Tracker = (t) => t): Promise<boolean> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const json = await this.redis.get(this.trackerKey(id));
      if (json === null) return false;
      const tracker = await this.parse(id, json);
      if (!stale(storedSecrets(id, JSON.parse(json)), tracker)) return false;
      const { result } = await this.saveIf(json, change(structuredClone(tracker)), tracker);
      if (result === 1) return true;
      if (result === -1) throw new TrackerConflictError(`A token of tracker ${id} already belongs to another tracker.`);
    }
    throw new TrackerConflictError(`Tracker ${id} is being changed by someone else; try again.`);
  }

  /**
   * Removes a tracker, even one whose secrets this process cannot open: only its tokens are read.
   * It leaves a mark for REMOVED_MARK_SECONDS, by which the router knows that the records of this
   * tracker still queued are to be discarded rather than kept for a tracker of that id to come.
   */
  async remove(id: string): Promise<boolean> {
    const json = await this.redis.get(this.trackerKey(id));
    if (json === null) return false;
    const parsed = TrackerSchema.shape.tokens.safeParse(storedFields(json).tokens);
    const tx = this.redis.multi().del(this.trackerKey(id)).srem(this.indexKey, id).set(this.removedKey(id), new Date().toISOString(), 'EX', REMOVED_MARK_SECONDS);
    for (const t of parsed.success ? parsed.data : []) tx.del(this.tokenKey(tokenDigest(t.token)));
    await tx.exec();
    noteChange(`tracker ${id}`, { id }, undefined);
    await announceTrackerChange(this.redis, this.prefix, id);
    return true;
  }

  /**
   * What removing a tracker needs to know of it (its destinations' ids and its partitions), read
   * from its stored JSON as leniently as possible, so that a tracker that cannot be read can be
   * removed too. Undefined when there is no such tracker.
   */
  async outline(id: string): Promise<{ destinationIds: string[]; sourceIds: string[]; partitions: number } | undefined> {
    const json = await this.redis.get(this.trackerKey(id));
    if (json === null) return undefined;
    const stored = storedFields(json);
    const ids = (list: unknown) => (Array.isArray(list) ? (list as Array<{ id?: unknown } | null>).flatMap((item) => (typeof item?.id === 'string' ? [item.id] : [])) : []);
    const partitions = TrackerSchema.shape.partitions.safeParse(stored.partitions);
    return { destinationIds: ids(stored.destinations), sourceIds: ids(stored.sources), partitions: partitions.success ? partitions.data : 1 };
  }

  /** When a tracker of this id was last removed, within REMOVED_MARK_SECONDS. */
  async removedAt(id: string): Promise<string | undefined> {
    return (await this.redis.get(this.removedKey(id))) ?? undefined;
  }
}
