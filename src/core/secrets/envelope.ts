import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { KEY_ID_PATTERN, SecretsError, type Keyring } from './keyring';

/**
 * A secret as stored: `enc:v1:<key id>:<base64url of IV | ciphertext | tag>`, AES-256-GCM of the
 * value's JSON text. Recognisable as a string, so that plain values written before encryption
 * existed sit beside sealed ones until they are sealed too. The version leaves room for another
 * cipher; the key id says which key of the keyring opens it.
 */
export const ENVELOPE_PREFIX = 'enc:v1:';

/** GCM's recommended nonce: 96 random bits per value (NIST SP 800-38D, 8.2.2). */
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** `unknown-key`: the keyring holds no key of that id; `does-not-open`: the key, the value or its place is not the one it was sealed with. */
export type OpenFailure = 'unknown-key' | 'does-not-open';

export class SecretOpenError extends SecretsError {
  override name = 'SecretOpenError';
  constructor(
    readonly reason: OpenFailure,
    readonly keyId: string,
    message: string,
  ) {
    super(message);
  }
}

export function isEnvelope(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(ENVELOPE_PREFIX);
}

/** The key id an envelope names (what `secrets status` counts), or undefined when it names none. */
export function envelopeKeyId(envelope: string): string | undefined {
  const end = envelope.indexOf(':', ENVELOPE_PREFIX.length);
  const id = end < 0 ? '' : envelope.slice(ENVELOPE_PREFIX.length, end);
  return KEY_ID_PATTERN.test(id) ? id : undefined;
}

/**
 * Additional data of the cipher: the format, the key id and what the value belongs to
 * (`tracker:shop/sources/github/secret`). A value copied to another tracker or field, or its key id
 * rewritten, fails the tag check instead of opening there.
 */
function additionalData(keyId: string, binding: string): Buffer {
  return Buffer.from(`tributary-secret\nv1\n${keyId}\n${binding}`, 'utf8');
}

/** `value` (any JSON value: a password, a service-account key) sealed under the keyring's current key, for the place `binding`. */
export function sealValue(keyring: Keyring, value: unknown, binding: string): string {
  const keyId = keyring.currentId;
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keyring.keys.get(keyId)!, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(additionalData(keyId, binding));
  const body = Buffer.concat([iv, cipher.update(JSON.stringify(value), 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `${ENVELOPE_PREFIX}${keyId}:${body.toString('base64url')}`;
}

/** The value an envelope holds, or a {@link SecretOpenError}: no key of its id, or it does not open (wrong key, altered, moved). */
export function openValue(keyring: Keyring, envelope: string, binding: string): unknown {
  const keyId = envelopeKeyId(envelope);
  if (keyId === undefined) throw new SecretOpenError('does-not-open', '?', 'an encrypted value names no key id');
  const key = keyring.keys.get(keyId);
  if (!key) throw new SecretOpenError('unknown-key', keyId, `key id ${keyId} is not in the key file`);
  const body = Buffer.from(envelope.slice(ENVELOPE_PREFIX.length + keyId.length + 1), 'base64url');
  const failed = () => new SecretOpenError('does-not-open', keyId, `does not open under key ${keyId}: that key is not the one it was encrypted with, or the value was altered or copied from another place`);
  if (body.length < IV_BYTES + TAG_BYTES) throw failed();
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, body.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAAD(additionalData(keyId, binding));
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
    const text = Buffer.concat([decipher.update(body.subarray(IV_BYTES, body.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    return JSON.parse(text) as unknown;
  } catch {
    throw failed();
  }
}
