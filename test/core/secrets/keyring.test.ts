import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { KeyFileKeyring, writeKeyFile } from '../../../src/core/secrets/key-file';
import { generateKey, KeyringFileError, parseKeyring, serializeKeyring, type Keyring } from '../../../src/core/secrets/keyring';
import { waitFor } from '../../helpers/wait';

const dir = mkdtempSync(path.join(tmpdir(), 'tributary-keyring-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const KEY = generateKey().toString('base64');
const file = (name: string) => path.join(dir, name);

function refusal(text: string): string {
  try {
    parseKeyring(text, 'the key file /etc/tributary/keys.json');
  } catch (err) {
    expect(err).toBeInstanceOf(KeyringFileError);
    return (err as Error).message;
  }
  throw new Error('accepted');
}

test('a key file: the current key id and every key by id, base64 or base64url', () => {
  const other = generateKey();
  const keyring = parseKeyring(JSON.stringify({ current: '2026-01-10-7f3a', keys: { '2026-01-10-7f3a': KEY, old: other.toString('base64url') } }), 'f');
  expect(keyring.currentId).toBe('2026-01-10-7f3a');
  expect([...keyring.keys.keys()]).toEqual(['2026-01-10-7f3a', 'old']);
  expect(keyring.keys.get('old')).toEqual(other);
  expect(parseKeyring(serializeKeyring(keyring), 'f')).toEqual(keyring);
});

test('each mistake is named with the file and the field, and no key is ever quoted', () => {
  const where = 'the key file /etc/tributary/keys.json';
  // JSON.parse's own message quotes the text around the error: not passed on.
  const broken = refusal(`{"current": "a", "keys": {"a": "${KEY}"`);
  expect(broken).toBe(`${where} is not valid JSON; a key file is JSON: {"current": "<key id>", "keys": {"<key id>": "<32 random bytes, base64>"}}`);
  expect(broken).not.toContain(KEY);
  expect(refusal('[]')).toBe(`${where}: a key file is JSON: {"current": "<key id>", "keys": {"<key id>": "<32 random bytes, base64>"}}`);
  expect(refusal(JSON.stringify({ current: 'a', keys: { a: KEY }, curent: 'a' }))).toMatch(/: unknown field "curent"; /);
  expect(refusal(JSON.stringify({ current: 'a', keys: {} }))).toMatch(/: "keys" holds no key; /);
  expect(refusal(JSON.stringify({ current: 'a:b', keys: { 'a:b': KEY } }))).toBe(`${where}: key id "a:b" is not 1 to 64 letters, digits, _, . and -, starting with a letter or digit`);
  const short = generateKey().subarray(0, 16).toString('base64');
  const shortMessage = refusal(JSON.stringify({ current: 'a', keys: { a: short } }));
  expect(shortMessage).toBe(`${where}: key "a" is 16 bytes; a key is 32 random bytes in base64, e.g. the output of: openssl rand -base64 32`);
  expect(shortMessage).not.toContain(short);
  expect(refusal(JSON.stringify({ current: 'a', keys: { a: 'not base64!' } }))).toMatch(/: key "a" is not base64; /);
  expect(refusal(JSON.stringify({ current: 'a', keys: { a: 42 } }))).toMatch(/: key "a" is not a string; /);
  expect(refusal(JSON.stringify({ keys: { a: KEY } }))).toBe(`${where}: "current" names no key; it is the id of the key new secrets are encrypted with`);
  expect(refusal(JSON.stringify({ current: 'b', keys: { a: KEY } }))).toBe(`${where}: "current" is "b", which is not one of its keys (a)`);
});

test('the default key file is made once, mode 0600, by whichever of several processes comes first', async () => {
  const at = file('made/secrets-key');
  const rings = Array.from({ length: 8 }, () => new KeyFileKeyring(at, true));
  const keyrings = await Promise.all(rings.map((r) => r.keyring()));
  expect(rings.filter((r) => r.created)).toHaveLength(1);
  expect(new Set(keyrings.map((k) => k.keys.get(k.currentId)!.toString('hex'))).size).toBe(1);
  expect(statSync(at).mode & 0o777).toBe(0o600);
  expect(await rings[0]!.readableByOthers()).toBe(false);
  expect(parseKeyring(readFileSync(at, 'utf8'), at)).toEqual(keyrings[0]);
});

test('a key file the operator names must exist: none is made for it', async () => {
  const at = file('named-but-missing.json');
  await expect(new KeyFileKeyring(at, false).keyring()).rejects.toThrow(`the key file ${at} (SECRETS_KEY_FILE) does not exist; see docs/operating.md, "Secrets at rest"`);
});

describe('a changed key file', () => {
  const one: Keyring = { currentId: 'a', keys: new Map([['a', generateKey()]]) };
  const two: Keyring = { currentId: 'b', keys: new Map([...one.keys, ['b', generateKey()]]) };

  test('is read again while watched: well-formed, it replaces the keys; broken or refused, the keys stay and it is said why, once', async () => {
    const at = file('watched.json');
    await writeKeyFile(at, one);
    const keys = new KeyFileKeyring(at, false);
    expect((await keys.keyring()).currentId).toBe('a');
    const reloaded: string[] = [];
    const errors: string[] = [];
    let refuse: string | undefined;
    const stop = keys.watch({ intervalMs: 20, accept: async () => refuse, onReload: (k) => reloaded.push(k.currentId), onError: (m) => errors.push(m) });
    try {
      writeFileSync(at, '{"current": "b", "keys": {');
      await waitFor(() => errors.length === 1, { message: 'the broken file reported' });
      expect(errors[0]).toMatch(/is not valid JSON/);
      expect((await keys.keyring()).currentId).toBe('a');

      refuse = 'key a is still in use';
      await writeKeyFile(at, { currentId: 'b', keys: new Map([['b', two.keys.get('b')!]]) });
      await waitFor(() => errors.length === 2, { message: 'the refusal reported' });
      expect(errors[1]).toBe('key a is still in use');
      expect((await keys.keyring()).currentId).toBe('a');

      refuse = undefined;
      await writeKeyFile(at, two);
      // The watcher may take the b-only file first (no longer refused) before it sees this one.
      await waitFor(async () => (await keys.keyring()).keys.size === 2, { message: 'the new keys taken' });
      expect(await keys.keyring()).toEqual(two);
      expect(reloaded.at(-1)).toBe('b');
      expect(errors).toHaveLength(2);
    } finally {
      stop();
    }
  });

  test('is read at once when a value names a key not loaded yet (refresh), without waiting for the next look', async () => {
    const at = file('refreshed.json');
    await writeKeyFile(at, one);
    const keys = new KeyFileKeyring(at, false);
    await keys.keyring();
    await writeKeyFile(at, two);
    expect((await keys.keyring()).currentId).toBe('a');
    expect((await keys.refresh()).currentId).toBe('b');
  });
});
