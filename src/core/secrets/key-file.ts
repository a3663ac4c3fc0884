import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { KeyringFileError, newKeyring, parseKeyring, serializeKeyring, type Keyring } from './keyring';

/** Name of the key file made under `DATA_DIR` when SECRETS_KEY_FILE is not set. */
export const DEFAULT_KEY_FILE = 'secrets-key';

/** The key file the configuration names: SECRETS_KEY_FILE, which must exist, or DATA_DIR/secrets-key, made on a first start. */
export function keyFileOf(config: { secretsKeyFile: { path: string; configured: boolean } }): KeyFileKeyring {
  return new KeyFileKeyring(config.secretsKeyFile.path, !config.secretsKeyFile.configured);
}

/** Where the tracker store gets its keys (src/core/trackers/store.ts). */
export interface SecretKeys {
  /** The keys, read on first use. */
  keyring(): Promise<Keyring>;
  /**
   * The keys read again now: a stored value names a key this process has not seen, so the file may
   * have just gained it (another process made it current before this one's next look at the file).
   */
  refresh(): Promise<Keyring>;
  /** How messages name where the keys come from. */
  readonly source: string;
}

/** Keys held in memory only (tests, and a keyring being checked before it is written). */
export function fixedKeys(keyring: Keyring, source = 'the keyring'): SecretKeys {
  return { keyring: async () => keyring, refresh: async () => keyring, source };
}

/** Decides whether a changed key file may replace the keys in use: a refusal says why. */
export type AcceptKeyring = (next: Keyring) => Promise<string | undefined>;

export interface WatchOptions {
  /** How often the file is read again. Default 1000 ms. */
  intervalMs?: number;
  accept?: AcceptKeyring;
  onReload?: (keyring: Keyring) => void;
  /** A changed file that cannot be used (unreadable, malformed, refused): the keys in use stay. Each distinct message once. */
  onError?: (message: string) => void;
}

async function readText(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new KeyringFileError(`cannot read the key file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/**
 * Writes a key file whole (a private temporary file renamed into place), mode 0600, so that a
 * process reading it meanwhile sees the old keys or the new ones, never half a file.
 */
export async function writeKeyFile(file: string, keyring: Keyring): Promise<void> {
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString('hex')}`;
  try {
    await writeFile(temporary, serializeKeyring(keyring), { mode: 0o600, flag: 'wx' });
    await rename(temporary, file);
  } catch (err) {
    await rm(temporary, { force: true });
    throw new KeyringFileError(`cannot write the key file ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); where a secret manager mounts it, change it there`);
  }
}

/**
 * The operator's keys, read from a key file (SECRETS_KEY_FILE, or `DATA_DIR/secrets-key`), and read
 * again when the file changes (`watch`, and `refresh` when a value names an unknown key), so that a
 * rotation reaches every process without a restart. Keys are never logged: messages name the file.
 */
export class KeyFileKeyring implements SecretKeys {
  private current: Keyring | undefined;
  private text: string | undefined;
  private loading: Promise<Keyring> | undefined;
  private reloading: Promise<void> | undefined;
  private hooks: Omit<WatchOptions, 'intervalMs'> = {};
  private lastError: string | undefined;
  /** The file was made by this process (a first start). */
  created = false;

  constructor(
    readonly file: string,
    /** Make the file with a new key when it does not exist (the default location only: a path the operator names must exist). */
    private readonly create: boolean,
  ) {}

  get source(): string {
    return `the key file ${this.file}`;
  }

  keyring(): Promise<Keyring> {
    if (this.current) return Promise.resolve(this.current);
    this.loading ??= this.load().finally(() => (this.loading = undefined));
    return this.loading;
  }

  private async load(): Promise<Keyring> {
    let text = await readText(this.file);
    if (text === undefined) {
      if (!this.create) throw new KeyringFileError(`the key file ${this.file} (SECRETS_KEY_FILE) does not exist; see docs/operating.md, "Secrets at rest"`);
      text = await this.createFile();
    }
    this.current = parseKeyring(text, `the key file ${this.file}`);
    this.text = text;
    return this.current;
  }

  /**
   * A new key file, made as the admin token's is (src/admin/admin-token.ts): a private temporary
   * file hard-linked into place, so of two processes starting at once, one makes it and the other
   * reads that one back.
   */
  private async createFile(): Promise<string> {
    await mkdir(path.dirname(this.file), { recursive: true });
    const text = serializeKeyring(newKeyring());
    const temporary = `${this.file}.${process.pid}.${randomBytes(6).toString('hex')}`;
    await writeFile(temporary, text, { mode: 0o600, flag: 'wx' });
    try {
      await link(temporary, this.file);
      this.created = true;
      return text;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const winner = await readText(this.file);
      if (winner === undefined) throw err;
      return winner;
    } finally {
      await rm(temporary, { force: true });
    }
  }

  /** Whether the file may be read by other users than its owner (a warning at start, not a refusal: mounted secrets are often 0644 inside a container). */
  async readableByOthers(): Promise<boolean> {
    return ((await stat(this.file)).mode & 0o077) !== 0;
  }

  async refresh(): Promise<Keyring> {
    if (!this.current) return this.keyring();
    // A read under way may have begun before the change that sent us here: one more after it.
    if (this.reloading) await this.reloading;
    await this.reload();
    return this.current;
  }

  /** Reads the file; a changed, well-formed and accepted one replaces the keys in use. One read at a time. */
  private reload(): Promise<void> {
    const { accept, onReload, onError } = this.hooks;
    this.reloading ??= (async () => {
      try {
        const text = await readText(this.file);
        if (text === undefined) throw new KeyringFileError(`the key file ${this.file} is gone`);
        if (text === this.text) return;
        const next = parseKeyring(text, `the key file ${this.file}`);
        const refusal = await accept?.(next);
        if (refusal !== undefined) throw new KeyringFileError(refusal);
        this.current = next;
        this.text = text;
        this.lastError = undefined;
        onReload?.(next);
      } catch (err) {
        const message = (err as Error).message;
        if (message !== this.lastError) onError?.(message);
        this.lastError = message;
      }
    })().finally(() => (this.reloading = undefined));
    return this.reloading;
  }

  /** Reads the file every `intervalMs` from now on; returns what stops it. */
  watch({ intervalMs = 1000, ...hooks }: WatchOptions = {}): () => void {
    this.hooks = hooks;
    const timer = setInterval(() => void this.reload(), intervalMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  /** Reads the file now, as the next tick of `watch` would (SIGHUP). */
  reloadNow(): Promise<void> {
    return this.reload();
  }
}
