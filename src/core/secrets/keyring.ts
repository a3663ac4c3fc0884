import { randomBytes } from 'node:crypto';

/**
 * The operator's keys, as a key file holds them (docs/operating.md, "Secrets at rest"):
 *
 * ```json
 * { "current": "2026-01-10-7f3a", "keys": { "2026-01-10-7f3a": "<32 random bytes, base64>", "2025-06-02-c41d": "…" } }
 * ```
 *
 * New values are sealed under `current`; every other key only opens values sealed before, until
 * they are sealed again (`tributary secrets reencrypt`) and it is dropped.
 */
export interface Keyring {
  readonly currentId: string;
  /** Every key by its id, the current one included. */
  readonly keys: ReadonlyMap<string, Buffer>;
}

/** AES-256: 32 bytes. */
export const KEY_BYTES = 32;

/** A key id names a key inside envelopes (`enc:v1:<key id>:…`), so it never holds a colon. */
export const KEY_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

const SHAPE = 'a key file is JSON: {"current": "<key id>", "keys": {"<key id>": "<32 random bytes, base64>"}}';

/** Why stored secrets or their keys cannot be used, in one line that names key ids, files and places, never a value or a key. */
export class SecretsError extends Error {
  override name = 'SecretsError';
}

/** A key file that cannot be used, and why. Its message names the file and the field, never a key. */
export class KeyringFileError extends SecretsError {
  override name = 'KeyringFileError';
}

/** 32 random bytes. */
export function generateKey(): Buffer {
  return randomBytes(KEY_BYTES);
}

/** A new key's id: the day it was made and 16 random bits, so that two made the same day differ. */
export function newKeyId(now = new Date()): string {
  return `${now.toISOString().slice(0, 10)}-${randomBytes(2).toString('hex')}`;
}

/** A key id as messages show it: ids are not secret, but a stray key pasted as one should not be echoed whole. */
function shown(id: string): string {
  return JSON.stringify(id.length > 64 ? `${id.slice(0, 8)}…` : id);
}

function decodeKey(source: string, id: string, value: unknown): Buffer {
  const how = `a key is ${KEY_BYTES} random bytes in base64, e.g. the output of: openssl rand -base64 32`;
  if (typeof value !== 'string') throw new KeyringFileError(`${source}: key ${shown(id)} is not a string; ${how}`);
  const text = value.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) throw new KeyringFileError(`${source}: key ${shown(id)} is not base64; ${how}`);
  const key = Buffer.from(text, 'base64');
  if (key.length !== KEY_BYTES) throw new KeyringFileError(`${source}: key ${shown(id)} is ${key.length} bytes; ${how}`);
  return key;
}

/**
 * A key file's text as a keyring, or a {@link KeyringFileError} naming `source` (the file) and what
 * is wrong. JSON.parse's own message is not passed on: it quotes the text around the error, which
 * may be a key.
 */
export function parseKeyring(text: string, source: string): Keyring {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new KeyringFileError(`${source} is not valid JSON; ${SHAPE}`);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new KeyringFileError(`${source}: ${SHAPE}`);
  const { current, keys, ...rest } = data as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0) throw new KeyringFileError(`${source}: unknown field ${shown(unknown[0]!)}; ${SHAPE}`);
  if (typeof keys !== 'object' || keys === null || Array.isArray(keys) || Object.keys(keys).length === 0) throw new KeyringFileError(`${source}: "keys" holds no key; ${SHAPE}`);
  const decoded = new Map<string, Buffer>();
  for (const [id, value] of Object.entries(keys)) {
    if (!KEY_ID_PATTERN.test(id)) throw new KeyringFileError(`${source}: key id ${shown(id)} is not 1 to 64 letters, digits, _, . and -, starting with a letter or digit`);
    decoded.set(id, decodeKey(source, id, value));
  }
  if (typeof current !== 'string') throw new KeyringFileError(`${source}: "current" names no key; it is the id of the key new secrets are encrypted with`);
  if (!decoded.has(current)) throw new KeyringFileError(`${source}: "current" is ${shown(current)}, which is not one of its keys (${[...decoded.keys()].join(', ')})`);
  return { currentId: current, keys: decoded };
}

/** The text of a key file holding `keyring`, the current key first. */
export function serializeKeyring(keyring: Keyring): string {
  const ids = [keyring.currentId, ...[...keyring.keys.keys()].filter((id) => id !== keyring.currentId)];
  const keys = Object.fromEntries(ids.map((id) => [id, keyring.keys.get(id)!.toString('base64')]));
  return `${JSON.stringify({ current: keyring.currentId, keys }, null, 2)}\n`;
}

/** A keyring of one new key. */
export function newKeyring(): Keyring {
  const id = newKeyId();
  return { currentId: id, keys: new Map([[id, generateKey()]]) };
}
