import { envelopeKeyId, isEnvelope, openValue, sealValue, SecretOpenError } from '../../../src/core/secrets/envelope';
import { generateKey, type Keyring } from '../../../src/core/secrets/keyring';
import { openSecrets, sealSecrets, secretSlots, StoredSecretError, storedSecrets } from '../../../src/core/secrets/tracker-secrets';

const keyring = (currentId: string, ...ids: string[]): Keyring => ({ currentId, keys: new Map([currentId, ...ids].map((id) => [id, generateKey()])) });
const BINDING = 'tracker:shop/sources/github/secret';

/** The failure of `fn`, which must throw a SecretOpenError. */
function openFailure(fn: () => unknown): SecretOpenError {
  try {
    fn();
  } catch (err) {
    if (err instanceof SecretOpenError) return err;
    throw err;
  }
  throw new Error('it opened');
}

test('a value of any JSON type comes back as it went in, each sealing with its own IV', () => {
  const keys = keyring('k1');
  for (const value of ['whsec_abc', 'pässwörd ✓', '', { type: 'service_account', private_key: '-----BEGIN PRIVATE KEY-----\nx\n' }, 1234]) {
    const sealed = sealValue(keys, value, BINDING);
    expect(isEnvelope(sealed)).toBe(true);
    expect(sealed).toMatch(/^enc:v1:k1:[A-Za-z0-9_-]+$/);
    expect(envelopeKeyId(sealed)).toBe('k1');
    expect(openValue(keys, sealed, BINDING)).toEqual(value);
  }
  expect(sealValue(keys, 'same', BINDING)).not.toBe(sealValue(keys, 'same', BINDING));
  expect(isEnvelope('whsec_abc')).toBe(false);
});

test('a key id the keyring does not hold, or another key under the same id, is refused by name', () => {
  const sealed = sealValue(keyring('old'), 'secret', BINDING);
  const unknown = openFailure(() => openValue(keyring('new'), sealed, BINDING));
  expect(unknown).toMatchObject({ reason: 'unknown-key', keyId: 'old' });
  expect(unknown.message).toBe('key id old is not in the key file');
  const other = openFailure(() => openValue(keyring('old'), sealed, BINDING));
  expect(other).toMatchObject({ reason: 'does-not-open', keyId: 'old' });
  expect(other.message).toMatch(/^does not open under key old: /);
});

test('a tampered ciphertext, IV, tag or key id does not open', () => {
  const keys = keyring('k1', 'k2');
  const sealed = sealValue(keys, 'secret', BINDING);
  const body = Buffer.from(sealed.slice('enc:v1:k1:'.length), 'base64url');
  for (const at of [0, 12, body.length - 1]) {
    const flipped = Buffer.from(body);
    flipped[at]! ^= 1;
    expect(openFailure(() => openValue(keys, `enc:v1:k1:${flipped.toString('base64url')}`, BINDING)).reason).toBe('does-not-open');
  }
  expect(openFailure(() => openValue(keys, `enc:v1:k1:${body.subarray(0, 20).toString('base64url')}`, BINDING)).reason).toBe('does-not-open');
  // Renamed to another key the keyring holds: the key id is part of what the tag covers.
  expect(openFailure(() => openValue(keys, sealed.replace('enc:v1:k1:', 'enc:v1:k2:'), BINDING)).reason).toBe('does-not-open');
  expect(openFailure(() => openValue(keys, 'enc:v1:no key id', BINDING)).reason).toBe('does-not-open');
});

test('a value moved to another tracker or another field does not open there', () => {
  const keys = keyring('k1');
  const sealed = sealValue(keys, 'secret', BINDING);
  for (const elsewhere of ['tracker:blog/sources/github/secret', 'tracker:shop/sources/stripe/secret', 'tracker:shop/sources/github/previousSecret', 'tracker:shop/privacySecret']) {
    expect(openFailure(() => openValue(keys, sealed, elsewhere)).reason).toBe('does-not-open');
  }
});

describe('the secrets of a tracker', () => {
  const tracker = () => ({
    id: 'shop',
    tokens: [{ token: 'trk_public_token_embedded_in_pages' }],
    privacySecret: 'hmac-key-hmac-key-hmac-key',
    sources: [{ id: 'github', type: 'github', secret: 'gh-secret-1', previousSecret: 'gh-secret-0', mapping: {} }],
    destinations: [
      { id: 'pg', type: 'postgres', settings: { host: 'db', password: 'pg-pass', options: [{ client_secret: 'nested' }], url: 'postgres://u:url-pass@db/x', database: 'x' } },
      { id: 'sheet', type: 'google-sheets', settings: { spreadsheetId: 'abc', credentials: { type: 'service_account', private_key: 'PEM-PRIVATE-KEY-BODY' }, title: 'enc:v1:looks-sealed' } },
    ],
  });

  test('are the webhook secrets, the HMAC key and the secret settings at any depth; not the tokens', () => {
    expect(secretSlots(tracker()).map((s) => s.field)).toEqual([
      'privacySecret',
      'sources/github/secret',
      'sources/github/previousSecret',
      'destinations/pg/settings/password',
      'destinations/pg/settings/options/0/client_secret',
      'destinations/pg/settings/url',
      'destinations/sheet/settings/credentials',
      'destinations/sheet/settings/title',
    ]);
  });

  test('sealed in place under the current key, opened back to the same values; nothing else changes', () => {
    const keys = keyring('k1');
    const doc = tracker();
    sealSecrets('shop', doc, keys);
    const text = JSON.stringify(doc);
    for (const plain of ['hmac-key', 'gh-secret', 'pg-pass', 'nested', 'url-pass', 'PEM-PRIVATE', 'looks-sealed']) expect(text).not.toContain(plain);
    expect(text).toContain('trk_public_token_embedded_in_pages');
    expect(storedSecrets('shop', doc).every((s) => s.keyId === 'k1')).toBe(true);
    openSecrets('shop', doc, keys);
    expect(doc).toEqual(tracker());
  });

  test('plain values (stored before encryption) are read as they are, and counted as plain', () => {
    const doc = tracker();
    doc.destinations[1]!.settings.title = 'Shop';
    expect(storedSecrets('shop', doc).map((s) => s.keyId)).toEqual(Array(7).fill(null));
    openSecrets('shop', doc, undefined);
    expect(doc.privacySecret).toBe('hmac-key-hmac-key-hmac-key');
  });

  test('one that does not open is refused naming its key id, tracker and field', () => {
    const doc = tracker();
    sealSecrets('shop', doc, keyring('k1'));
    const refusal = (() => {
      try {
        openSecrets('shop', doc, keyring('k2'), 'the key file /etc/keys.json');
      } catch (err) {
        return err as StoredSecretError;
      }
    })();
    expect(refusal).toBeInstanceOf(StoredSecretError);
    expect(refusal).toMatchObject({ reason: 'unknown-key', keyId: 'k1', trackerId: 'shop', field: 'privacySecret' });
    expect(refusal!.message).toBe("the secret at tracker shop, privacySecret is encrypted under key id k1, which the key file /etc/keys.json does not hold: use the key file that holds it (SECRETS_KEY_FILE, or the relay's DATA_DIR), or put that key back in this one");
    // A whole tracker copied under another id opens nowhere.
    expect(() => openSecrets('blog', JSON.parse(JSON.stringify(doc)), keyring('k1'))).toThrow(StoredSecretError);
  });
});
