import { hasUrlPassword, isSecretKey } from '../redact';
import { envelopeKeyId, isEnvelope, openValue, sealValue, SecretOpenError, type OpenFailure } from './envelope';
import { SecretsError, type Keyring } from './keyring';

/**
 * Which values of a tracker's JSON are secrets: each webhook source's `secret` and
 * `previousSecret`, the personal-data HMAC key `privacySecret`, and in each destination's settings,
 * at any depth, every setting src/core/redact.ts names a secret (`password`, `credentials`,
 * `private_key`, `client_secret`…) and any URL that carries a password
 * (`postgres://user:password@host/db`). Tracker tokens are not: they are public by nature (in web
 * pages), and indexed by their digest already.
 */
export interface SecretSlot {
  /** Where it is in the tracker, e.g. `sources/github/secret`, `destinations/pg/settings/password`. */
  field: string;
  value: unknown;
  set(value: unknown): void;
}

/** RFC 6901 escaping, so that a settings key holding `/` cannot make two places read the same. */
const segment = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/**
 * A setting is a secret by its name, or by its value: a URL with a password, or text that reads as
 * an envelope (sealed again, so that a stored value is never read as an envelope it is not).
 */
function isSecretSetting(key: string, value: unknown): boolean {
  if (value === undefined || value === null) return false;
  return isSecretKey(key) || isEnvelope(value) || hasUrlPassword(value);
}

function settingSlots(holder: Record<string, unknown> | unknown[], field: string, out: SecretSlot[]): void {
  for (const [key, value] of Object.entries(holder)) {
    const at = `${field}/${segment(key)}`;
    if (isSecretSetting(key, value)) out.push({ field: at, value, set: (v) => ((holder as Record<string, unknown>)[key] = v) });
    else if (isObject(value)) settingSlots(value as Record<string, unknown>, at, out);
  }
}

/** Every secret of a tracker's JSON value (as stored, or in memory), readable and replaceable in place. */
export function secretSlots(tracker: unknown): SecretSlot[] {
  if (!isObject(tracker)) return [];
  const out: SecretSlot[] = [];
  const t = tracker as Record<string, unknown>;
  if (t.privacySecret !== undefined && t.privacySecret !== null) out.push({ field: 'privacySecret', value: t.privacySecret, set: (v) => (t.privacySecret = v) });
  for (const source of Array.isArray(t.sources) ? t.sources : []) {
    if (!isObject(source)) continue;
    const s = source as Record<string, unknown>;
    for (const name of ['secret', 'previousSecret'] as const) {
      if (s[name] !== undefined && s[name] !== null) out.push({ field: `sources/${segment(String(s.id))}/${name}`, value: s[name], set: (v) => (s[name] = v) });
    }
  }
  for (const destination of Array.isArray(t.destinations) ? t.destinations : []) {
    if (!isObject(destination)) continue;
    const d = destination as Record<string, unknown>;
    if (isObject(d.settings)) settingSlots(d.settings as Record<string, unknown>, `destinations/${segment(String(d.id))}/settings`, out);
  }
  return out;
}

/** What the cipher binds a value to: its tracker and its place in it. */
export function secretBinding(trackerId: string, field: string): string {
  return `tracker:${trackerId}/${field}`;
}

/** A stored secret of a tracker: sealed under `keyId`, or still plain (`keyId` null) until sealed at the next start or `secrets reencrypt`. */
export interface StoredSecret {
  trackerId: string;
  field: string;
  keyId: string | null;
}

/** The secrets of a tracker's stored JSON value, with the key each is sealed under. */
export function storedSecrets(trackerId: string, stored: unknown): StoredSecret[] {
  return secretSlots(stored).map(({ field, value }) => ({ trackerId, field, keyId: isEnvelope(value) ? (envelopeKeyId(value) ?? '?') : null }));
}

/** A stored secret of a tracker that cannot be opened, said in one line: which key id, tracker and field. */
export class StoredSecretError extends SecretsError {
  override name = 'StoredSecretError';
  constructor(
    readonly reason: OpenFailure | 'no-keyring',
    readonly keyId: string,
    readonly trackerId: string,
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** Seals every secret of `tracker` (a JSON value in memory, changed in place) under the keyring's current key. */
export function sealSecrets(trackerId: string, tracker: unknown, keyring: Keyring): void {
  for (const slot of secretSlots(tracker)) slot.set(sealValue(keyring, slot.value, secretBinding(trackerId, slot.field)));
}

/**
 * Opens every sealed secret of a stored tracker (its parsed JSON, changed in place); plain ones
 * stay as they are. Without a keyring, a sealed value is refused as unopenable.
 */
export function openSecrets(trackerId: string, stored: unknown, keyring: Keyring | undefined, keySource = 'the key file'): void {
  for (const slot of secretSlots(stored)) {
    if (!isEnvelope(slot.value)) continue;
    const where = `tracker ${trackerId}, ${slot.field}`;
    if (!keyring) throw new StoredSecretError('no-keyring', envelopeKeyId(slot.value) ?? '?', trackerId, slot.field, `the secret at ${where} is encrypted, and this process was given no key to open it`);
    try {
      slot.set(openValue(keyring, slot.value, secretBinding(trackerId, slot.field)));
    } catch (err) {
      if (!(err instanceof SecretOpenError)) throw err;
      const message =
        err.reason === 'unknown-key'
          ? `the secret at ${where} is encrypted under key id ${err.keyId}, which ${keySource} does not hold: use the key file that holds it (SECRETS_KEY_FILE, or the relay's DATA_DIR), or put that key back in this one`
          : `the secret at ${where} ${err.message}`;
      throw new StoredSecretError(err.reason, err.keyId, trackerId, slot.field, message);
    }
  }
}
