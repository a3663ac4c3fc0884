import type { RedisClient } from '../core/redis/cluster';
import { rewritePersistence, type PersistenceRewrite } from '../core/redis/rewrite-persistence';
import { writeKeyFile, type KeyFileKeyring } from '../core/secrets/key-file';
import { generateKey, KEY_ID_PATTERN, newKeyId, SecretsError, type Keyring } from '../core/secrets/keyring';
import { StoredSecretError, type StoredSecret } from '../core/secrets/tracker-secrets';
import { UnreadableTrackerError, type TrackerStore } from '../core/trackers/store';
import { forgetKeyFile, hasKeptKeyFiles, takeInKeptKeyFiles } from './key-files';

/** How many stored secrets each key seals, and how many are still plain. */
export interface SecretsStatus {
  keyFile: string;
  currentKeyId: string;
  /** The keys of the key file, the current one first. */
  keyIds: string[];
  /** Stored secrets by the key they are encrypted under, with whether the key file holds it. */
  byKey: Array<{ keyId: string; secrets: number; inKeyFile: boolean; current: boolean }>;
  /** Secrets stored before encryption, sealed at the next start or `secrets reencrypt`. */
  plain: number;
  total: number;
  /** Where the plain ones are: tracker and field. */
  plainAt: string[];
}

/** What a pass over the trackers wrote. */
export interface ResealReport {
  /** Trackers written again. */
  trackers: number;
  /** Key files of earlier versions taken into Redis and deleted. */
  keyFiles: number;
  /** The Redis persistence files asked to be rewritten, so that the values replaced leave them too. */
  persistence: PersistenceRewrite[];
  /** Trackers left as stored because they cannot be read (docs/operating.md, "Trackers that cannot be read"). */
  unreadable: string[];
}

const where = (s: StoredSecret) => `tracker ${s.trackerId}, ${s.field}`;

/**
 * Secrets at rest, for the relay's start and the `tributary secrets` commands: check that every
 * stored secret opens, seal what is still plain, seal everything again under the current key, and
 * change the key file (add a key, make one current, drop one no secret is under any more).
 */
export class SecretsService {
  constructor(
    private readonly store: TrackerStore,
    private readonly keys: KeyFileKeyring,
    private readonly redis: RedisClient,
    private readonly dataDir: string,
  ) {}

  async status(): Promise<SecretsStatus> {
    const keyring = await this.keys.keyring();
    const stored = await this.store.secretsInventory();
    const counts = new Map<string, number>();
    for (const s of stored) if (s.keyId !== null) counts.set(s.keyId, (counts.get(s.keyId) ?? 0) + 1);
    const keyIds = [keyring.currentId, ...[...keyring.keys.keys()].filter((id) => id !== keyring.currentId)];
    const ids = [...keyIds, ...[...counts.keys()].filter((id) => !keyring.keys.has(id)).sort()];
    const plain = stored.filter((s) => s.keyId === null);
    return {
      keyFile: this.keys.file,
      currentKeyId: keyring.currentId,
      keyIds,
      byKey: ids.map((keyId) => ({ keyId, secrets: counts.get(keyId) ?? 0, inKeyFile: keyring.keys.has(keyId), current: keyId === keyring.currentId })),
      plain: plain.length,
      total: stored.length,
      plainAt: plain.map(where),
    };
  }

  /**
   * Opens every tracker; the first secret that does not open refuses the start in one line naming
   * its key id, tracker and field, with how many more fail (the key file is the process's, not one
   * tracker's). A tracker whose JSON is not a tracker does not refuse it: it is returned, and the
   * relay runs the others (docs/operating.md, "Trackers that cannot be read").
   */
  async verify(): Promise<UnreadableTrackerError[]> {
    const failures: StoredSecretError[] = [];
    const unreadable: UnreadableTrackerError[] = [];
    for (const id of await this.store.ids()) {
      try {
        await this.store.get(id);
      } catch (err) {
        if (err instanceof UnreadableTrackerError) unreadable.push(err);
        else if (err instanceof StoredSecretError) failures.push(err);
        else throw err;
      }
    }
    const [first] = failures;
    if (!first) return unreadable;
    const more = failures.length > 1 ? ` (and ${failures.length - 1} more tracker${failures.length > 2 ? 's' : ''} that cannot be opened)` : '';
    throw new SecretsError(`${first.message}${more}; see docs/operating.md, "Secrets at rest"`);
  }

  /** Seals the secrets still plain and takes in kept key files: at each start, after {@link verify}. */
  sealPlain(): Promise<ResealReport> {
    return this.resealAll((stored) => stored.some((s) => s.keyId === null));
  }

  /** Seals every secret under the current key (a rotation), plain ones and kept key files included. */
  async reencrypt(): Promise<ResealReport> {
    const { currentId } = await this.keys.refresh();
    return this.resealAll((stored) => stored.some((s) => s.keyId !== currentId));
  }

  private async resealAll(stale: (stored: readonly StoredSecret[]) => boolean): Promise<ResealReport> {
    let trackers = 0;
    let keyFiles = 0;
    const unreadable: string[] = [];
    for (const id of await this.store.ids()) {
      let takenIn: string[] = [];
      const wrote = await this.store
        .reseal(
          id,
          (stored, tracker) => stale(stored) || hasKeptKeyFiles(this.dataDir, tracker),
          (tracker) => {
            const taken = takeInKeptKeyFiles(this.dataDir, tracker);
            takenIn = taken.destinationIds;
            return taken.tracker;
          },
        )
        .catch((err: unknown) => {
          // Left as stored: what it holds stays under its key, which drop-key then keeps.
          if (!(err instanceof UnreadableTrackerError)) throw err;
          unreadable.push(id);
          return false;
        });
      if (!wrote) continue;
      trackers++;
      // Only once the tracker holds the key (sealed): a file deleted first would lose it.
      for (const destinationId of takenIn) forgetKeyFile(this.dataDir, id, destinationId);
      keyFiles += takenIn.length;
    }
    const persistence = trackers > 0 ? await rewritePersistence(this.redis) : [];
    return { trackers, keyFiles, persistence, unreadable };
  }

  /** Adds a new random key to the key file; `current`: new secrets are sealed under it from now on. Returns its id. */
  async addKey(id: string | undefined, current: boolean): Promise<string> {
    const keyring = await this.keys.refresh();
    const keyId = id ?? newKeyId();
    if (!KEY_ID_PATTERN.test(keyId)) throw new SecretsError(`a key id is 1 to 64 letters, digits, _, . and -, starting with a letter or digit (not ${JSON.stringify(keyId)})`);
    if (keyring.keys.has(keyId)) throw new SecretsError(`${this.keys.source} already holds a key ${keyId}`);
    await this.write({ currentId: current ? keyId : keyring.currentId, keys: new Map([...keyring.keys, [keyId, generateKey()]]) });
    return keyId;
  }

  /** Makes a key of the key file the current one. */
  async useKey(keyId: string): Promise<void> {
    const keyring = await this.keys.refresh();
    if (!keyring.keys.has(keyId)) throw new SecretsError(`${this.keys.source} holds no key ${keyId} (it holds ${[...keyring.keys.keys()].join(', ')})`);
    if (keyring.currentId !== keyId) await this.write({ currentId: keyId, keys: keyring.keys });
  }

  /** Removes a key from the key file: refused for the current key, and while any stored secret is still under it. */
  async dropKey(keyId: string): Promise<void> {
    const keyring = await this.keys.refresh();
    if (!keyring.keys.has(keyId)) throw new SecretsError(`${this.keys.source} holds no key ${keyId} (it holds ${[...keyring.keys.keys()].join(', ')})`);
    if (keyring.currentId === keyId) throw new SecretsError(`${keyId} is the current key: make another one current first (tributary secrets use-key <id>), then run tributary secrets reencrypt`);
    const under = (await this.store.secretsInventory()).filter((s) => s.keyId === keyId);
    if (under.length > 0) throw new SecretsError(`${under.length} stored secret${under.length === 1 ? ' is' : 's are'} still encrypted under ${keyId} (first: ${where(under[0]!)}): run tributary secrets reencrypt first`);
    const keys = new Map(keyring.keys);
    keys.delete(keyId);
    await this.write({ currentId: keyring.currentId, keys });
    await this.store.forgetKey(keyId);
  }

  private async write(keyring: Keyring): Promise<void> {
    await writeKeyFile(this.keys.file, keyring);
    await this.keys.refresh();
  }
}

/**
 * Whether a changed key file may replace the keys a process holds: not while a stored secret is
 * under a key it no longer holds (a key dropped before `secrets reencrypt` ran, or before a process
 * that had not yet seen the new current key wrote its last change). The process keeps its keys,
 * and says which key is still needed, until the file holds it again or nothing is under it.
 */
export async function refuseDroppedKeysInUse(store: TrackerStore, next: Keyring, source: string): Promise<string | undefined> {
  const missing = (await store.secretsInventory()).filter((s) => s.keyId !== null && !next.keys.has(s.keyId));
  if (missing.length === 0) return undefined;
  return `${source} changed, but no longer holds key ${missing[0]!.keyId}, under which ${missing.length} stored secret${missing.length === 1 ? ' is' : 's are'} still encrypted (first: ${where(missing[0]!)}); keeping the keys loaded before: run tributary secrets reencrypt, then drop the key`;
}
