import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { KeyFileKeyring, writeKeyFile } from '../../../src/core/secrets/key-file';
import { generateKey, SecretsError, type Keyring } from '../../../src/core/secrets/keyring';
import { StoredSecretError } from '../../../src/core/secrets/tracker-secrets';
import { TrackerStore } from '../../../src/core/trackers/store';
import { TrackerSchema, type Tracker } from '../../../src/core/trackers/types';
import { keyFilePath } from '../../../src/operator/key-files';
import { SecretsService } from '../../../src/operator/secrets-service';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../../helpers/redis';

/**
 * The tracker store with keys, on the test Redis: what Redis holds (read raw) against what a
 * reader gets; the migration of plain values at a start, several starting at once; rotation.
 */
const redis = new Redis(TEST_REDIS_URL);
const dir = mkdtempSync(path.join(tmpdir(), 'tributary-store-secrets-'));
const prefixes: string[] = [];
afterAll(async () => {
  await Promise.all(prefixes.map((p) => deletePrefix(p)));
  redis.disconnect();
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;
/** A prefix, a data directory and a key file of the test's own (`k1`, unless given). */
async function fixture(keyring: Keyring = { currentId: 'k1', keys: new Map([['k1', generateKey()]]) }) {
  const prefix = uniquePrefix('store-secrets');
  prefixes.push(prefix);
  const dataDir = path.join(dir, String(++n));
  mkdirSync(dataDir);
  const keyFile = path.join(dataDir, 'keys.json');
  await writeKeyFile(keyFile, keyring);
  const keys = new KeyFileKeyring(keyFile, false);
  const store = new TrackerStore(redis, prefix, keys);
  return { prefix, dataDir, keyFile, keys, store, plain: new TrackerStore(redis, prefix), raw: async (id: string) => (await redis.get(`${prefix}:tracker:${id}`))!, service: (s = store, k = keys) => new SecretsService(s, k, redis, dataDir) };
}

const KEY = { type: 'service_account', client_email: 'writer@project.iam.gserviceaccount.com', private_key: '-----BEGIN PRIVATE KEY-----\nCANARY-PEM\n-----END PRIVATE KEY-----\n' };
const PLAIN = ['CANARY-GH', 'CANARY-OLD', 'CANARY-HMAC', 'CANARY-PG', 'CANARY-PEM', 'CANARY-URL'];

const AT = '2026-01-01T00:00:00.000Z';

function tracker(id: string): Tracker {
  return TrackerSchema.parse({
    id,
    name: `Tracker ${id}`,
    createdAt: AT,
    tokens: [{ token: `trk_${id}_public_token_in_pages_0001`, createdAt: AT }],
    privacyRules: [{ property: 'email', action: 'hash' }],
    privacySecret: 'CANARY-HMAC-0123456789abcdef',
    sources: [{ id: 'github', type: 'github', secret: 'CANARY-GH-secret', previousSecret: 'CANARY-OLD-secret', createdAt: AT }],
    destinations: [
      { id: 'pg', type: 'postgres', settings: { host: 'db', database: 'x', password: 'CANARY-PG-pass', url: 'postgres://u:CANARY-URL@db/x' } },
      { id: 'sheet', type: 'google-sheets', settings: { spreadsheetId: 'abc', credentials: KEY } },
    ],
  });
}

test('every secret is encrypted in Redis and plain in memory, through create, update and save', async () => {
  const { store, raw } = await fixture();
  expect(await store.create(tracker('shop'))).toBe(true);
  const stored = await raw('shop');
  for (const plain of PLAIN) expect(stored).not.toContain(plain);
  expect(stored).toContain('trk_shop_public_token_in_pages_0001');
  const doc = JSON.parse(stored);
  expect([doc.privacySecret, doc.sources[0].secret, doc.sources[0].previousSecret, doc.destinations[0].settings.password, doc.destinations[0].settings.url, doc.destinations[1].settings.credentials]).toEqual(Array(6).fill(expect.stringMatching(/^enc:v1:k1:/)));
  expect(await store.get('shop')).toEqual(tracker('shop'));

  // The compare-and-set compares the text it read: sealed values in, a change out, sealed again.
  const renamed = await store.update('shop', (t) => ({ ...t, name: 'Renamed' }));
  expect(renamed).toEqual({ ...tracker('shop'), name: 'Renamed' });
  expect(await store.get('shop')).toEqual(renamed);
  for (const plain of PLAIN) expect(await raw('shop')).not.toContain(plain);
  await store.save({ ...tracker('shop'), name: 'Saved' });
  expect((await store.list()).trackers.map((t) => t.name)).toEqual(['Saved']);
});

test('a store without the keys cannot read sealed secrets, and says which; it can still remove the tracker', async () => {
  const { store, plain, prefix } = await fixture();
  await store.create(tracker('shop'));
  await expect(plain.get('shop')).rejects.toThrow(new StoredSecretError('no-keyring', 'k1', 'shop', 'privacySecret', 'the secret at tracker shop, privacySecret is encrypted, and this process was given no key to open it'));
  expect(await plain.remove('shop')).toBe(true);
  expect(await store.get('shop')).toBeUndefined();
  expect(await redis.exists(`${prefix}:trackers`, `${prefix}:tracker:shop`)).toBe(0);
});

test('a plain tracker (stored before encryption) is read as it is, then sealed at a start, once', async () => {
  const { store, plain, raw, service } = await fixture();
  await plain.create(tracker('shop'));
  for (const value of PLAIN) expect(await raw('shop')).toContain(value);
  expect(await store.get('shop')).toEqual(tracker('shop'));
  expect((await service().status()).plain).toBe(6);

  const report = await service().sealPlain();
  expect(report).toMatchObject({ trackers: 1, keyFiles: 0 });
  for (const value of PLAIN) expect(await raw('shop')).not.toContain(value);
  expect(await store.get('shop')).toEqual(tracker('shop'));
  expect(await service().sealPlain()).toMatchObject({ trackers: 0 });
  expect(await service().status()).toMatchObject({ plain: 0, total: 6, byKey: [{ keyId: 'k1', secrets: 6, inKeyFile: true, current: true }] });
});

test('several processes starting at once seal each tracker exactly once, and lose no change made meanwhile', async () => {
  const { prefix, keyFile, plain, store } = await fixture();
  const starts = Array.from({ length: 5 }, () => {
    const connection = new Redis(TEST_REDIS_URL);
    const keys = new KeyFileKeyring(keyFile, false);
    return { connection, service: new SecretsService(new TrackerStore(connection, prefix, keys), keys, connection, dir) };
  });
  const start = () => Promise.all(starts.map(async ({ service }) => (await service.verify(), service.sealPlain())));
  try {
    const first = Array.from({ length: 40 }, (_, i) => `a${i}`);
    for (const id of first) await plain.create(tracker(id));
    const reports = await start();
    expect(reports.reduce((sum, r) => sum + r.trackers, 0)).toBe(first.length);

    // Again, while the console renames every tracker: a rename seals what it writes too.
    const second = Array.from({ length: 40 }, (_, i) => `b${i}`);
    for (const id of second) await plain.create(tracker(id));
    const [again] = await Promise.all([start(), Promise.all(second.map((id) => store.update(id, (t) => ({ ...t, name: `Renamed ${id}` }))))]);
    expect(again.reduce((sum, r) => sum + r.trackers, 0)).toBeLessThanOrEqual(second.length);
    expect(await starts[0]!.service.status()).toMatchObject({ plain: 0, total: (first.length + second.length) * 6 });
    expect((await store.list()).trackers.filter((t) => t.id.startsWith('b')).map((t) => t.name)).toEqual(second.map((id) => `Renamed ${id}`).sort());
  } finally {
    for (const { connection } of starts) connection.disconnect();
  }
});

test('a start is refused when a stored secret names a key the key file does not hold, or does not open under it', async () => {
  const first = await fixture();
  await first.store.create(tracker('shop'));
  await first.store.create(tracker('blog'));
  const without = new KeyFileKeyring(path.join(dir, 'other.json'), true);
  await expect(new SecretsService(new TrackerStore(redis, first.prefix, without), without, redis, dir).verify()).rejects.toThrow(
    new SecretsError(`the secret at tracker blog, privacySecret is encrypted under key id k1, which the key file ${without.file} does not hold: use the key file that holds it (SECRETS_KEY_FILE, or the relay's DATA_DIR), or put that key back in this one (and 1 more tracker that cannot be opened); see docs/operating.md, "Secrets at rest"`),
  );
  const sameIdOtherKey = path.join(dir, 'same-id.json');
  await writeKeyFile(sameIdOtherKey, { currentId: 'k1', keys: new Map([['k1', generateKey()]]) });
  const wrong = new KeyFileKeyring(sameIdOtherKey, false);
  await expect(new SecretsService(new TrackerStore(redis, first.prefix, wrong), wrong, redis, dir).verify()).rejects.toThrow(
    /^the secret at tracker blog, privacySecret does not open under key k1: that key is not the one it was encrypted with, or the value was altered or copied from another place \(and 1 more tracker that cannot be opened\)/,
  );
});

test('a key file that is not the relay’s is refused before it seals anything', async () => {
  const { prefix, store } = await fixture();
  await store.create(tracker('shop'));
  const foreign = new KeyFileKeyring(path.join(dir, 'foreign', 'secrets-key'), true);
  await expect(new TrackerStore(redis, prefix, foreign).create(tracker('blog'))).rejects.toThrow(
    new SecretsError(`the key file ${foreign.file} holds none of the keys this relay's secrets are encrypted with (k1): use the relay's key file (SECRETS_KEY_FILE, or its DATA_DIR)`),
  );
  const impostorFile = path.join(dir, 'impostor.json');
  await writeKeyFile(impostorFile, { currentId: 'k1', keys: new Map([['k1', generateKey()]]) });
  await expect(new TrackerStore(redis, prefix, new KeyFileKeyring(impostorFile, false)).create(tracker('blog'))).rejects.toThrow(/holds a key k1 that is not the key k1 this relay's secrets are encrypted with/);
  expect(await store.ids()).toEqual(['shop']);
});

test('rotation: a key added, made current, everything encrypted again, the old key dropped; readers follow the file at once', async () => {
  const { store, keyFile, raw, service, prefix } = await fixture();
  await store.create(tracker('shop'));
  // Another process that read the key file before the rotation began.
  const elsewhere = new TrackerStore(redis, prefix, new KeyFileKeyring(keyFile, false));
  expect(await elsewhere.get('shop')).toEqual(tracker('shop'));

  const secrets = service();
  expect(await secrets.addKey('k2', false)).toBe('k2');
  await expect(secrets.addKey('k2', false)).rejects.toThrow(`the key file ${keyFile} already holds a key k2`);
  await store.update('shop', (t) => ({ ...t, name: 'Still k1' }));
  expect((await secrets.status()).byKey).toEqual([
    { keyId: 'k1', secrets: 6, inKeyFile: true, current: true },
    { keyId: 'k2', secrets: 0, inKeyFile: true, current: false },
  ]);
  await secrets.useKey('k2');
  await store.create(tracker('blog'));
  expect(JSON.parse(await raw('blog')).privacySecret).toMatch(/^enc:v1:k2:/);
  // Not yet seen by the other process: reading a value under k2 sends it to the key file first.
  expect(await elsewhere.get('blog')).toEqual(tracker('blog'));

  await expect(secrets.dropKey('k1')).rejects.toThrow(new SecretsError('6 stored secrets are still encrypted under k1 (first: tracker shop, privacySecret): run tributary secrets reencrypt first'));
  expect(await secrets.reencrypt()).toMatchObject({ trackers: 1 });
  expect(await secrets.status()).toMatchObject({ plain: 0, byKey: [{ keyId: 'k2', secrets: 12 }, { keyId: 'k1', secrets: 0 }] });
  await expect(secrets.dropKey('k2')).rejects.toThrow(/k2 is the current key: make another one current first/);
  await secrets.dropKey('k1');
  expect([...(await store.checkKeys()).keys.keys()]).toEqual(['k2']);
  expect(await elsewhere.get('shop')).toEqual({ ...tracker('shop'), name: 'Still k1' });
  // The HMAC key is the same value, only encrypted anew.
  expect((await store.get('shop'))!.privacySecret).toBe('CANARY-HMAC-0123456789abcdef');
});

test('a key an earlier version kept as a file under DATA_DIR/keys is taken into the tracker, sealed, and the file deleted; an operator’s own key file stays', async () => {
  const { store, plain, raw, dataDir, service } = await fixture();
  const kept = keyFilePath(dataDir, 'shop', 'sheet');
  mkdirSync(path.dirname(kept), { recursive: true, mode: 0o700 });
  writeFileSync(kept, JSON.stringify(KEY), { mode: 0o600 });
  const own = path.join(dataDir, 'operator-key.json');
  writeFileSync(own, JSON.stringify(KEY));
  await plain.create(
    TrackerSchema.parse({
      id: 'shop',
      name: 'Shop',
      tokens: [{ token: 'trk_shop_public_token_in_pages_0001' }],
      destinations: [
        { id: 'sheet', type: 'google-sheets', settings: { spreadsheetId: 'abc', keyFile: kept } },
        { id: 'other', type: 'google-sheets', settings: { spreadsheetId: 'def', keyFile: own } },
      ],
    }),
  );
  expect(await service().sealPlain()).toMatchObject({ trackers: 1, keyFiles: 1 });
  expect(existsSync(kept)).toBe(false);
  expect(existsSync(own)).toBe(true);
  expect(await raw('shop')).not.toContain('CANARY-PEM');
  const [sheet, other] = (await store.get('shop'))!.destinations;
  expect(sheet!.settings).toEqual({ spreadsheetId: 'abc', credentials: KEY });
  expect(other!.settings).toEqual({ spreadsheetId: 'def', keyFile: own });
});
