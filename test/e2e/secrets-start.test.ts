import { readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_KEY_FILE, KeyFileKeyring, writeKeyFile } from '../../src/core/secrets/key-file';
import { generateKey } from '../../src/core/secrets/keyring';
import { TrackerStore } from '../../src/core/trackers/store';
import { TrackerSchema } from '../../src/core/trackers/types';
import { freePort } from '../helpers/redis-server';
import { tributaryProcesses, waitReady, type TributaryProcess } from '../helpers/tributary-process';
import { waitFor } from '../helpers/wait';

/**
 * The relay's start with secrets at rest, as processes: several starting at once on one DATA_DIR
 * make one key file and seal what was stored plain; a start whose key file does not open a stored
 * secret is refused in one line that says which key id, tracker and field.
 */
jest.setTimeout(60_000);

const { prefix, dataDir, redis, spawn } = tributaryProcesses('secrets-start');
const plainStore = new TrackerStore(redis, prefix);
const tracker = (id: string) =>
  TrackerSchema.parse({
    id,
    name: id,
    tokens: [{ token: `trk_${id}_start_token_0123456789` }],
    sources: [{ id: 'github', type: 'github', secret: `PLAIN-${id}-webhook-secret` }],
    privacyRules: [{ property: 'email', action: 'hash' }],
    destinations: [{ id: 'pg', type: 'postgres', enabled: false, settings: { database: 'x', password: `PLAIN-${id}-password` } }],
  });

/** The one line a refused start prints, once it has exited 1. */
async function refusal(proc: TributaryProcess): Promise<string> {
  expect(await proc.exited).toBe(1);
  const lines = proc.output().trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^tributary: /);
  return lines[0]!;
}

test('processes starting at once on one DATA_DIR make one key file (0600) and seal the secrets stored plain', async () => {
  await plainStore.create(tracker('shop'));
  expect(await redis.get(`${prefix}:tracker:shop`)).toContain('PLAIN-shop-password');
  const ports = [await freePort(), await freePort()];
  const procs = [spawn('api', { PORT: String(ports[0]) }), spawn('worker'), spawn('api', { PORT: String(ports[1]) })];
  await Promise.all([waitReady(ports[0]!, procs[0]!), waitReady(ports[1]!, procs[2]!)]);
  const file = path.join(dataDir, DEFAULT_KEY_FILE);
  expect(statSync(file).mode & 0o777).toBe(0o600);
  const keys = new KeyFileKeyring(file, false);
  const stored = (await redis.get(`${prefix}:tracker:shop`))!;
  expect(stored).not.toContain('PLAIN-');
  expect(JSON.parse(stored).sources[0].secret).toMatch(new RegExp(`^enc:v1:${(await keys.keyring()).currentId}:`));
  expect((await new TrackerStore(redis, prefix, keys).get('shop'))!.sources[0]!.secret).toBe('PLAIN-shop-webhook-secret');
  // The worker is up too: nothing it said was an error.
  await waitFor(() => procs[1]!.child.exitCode === null);
  for (const p of procs) expect(p.output()).not.toMatch(/"level":(50|60)/);
  await Promise.all(procs.map((p) => p.stop()));
});

test('a start is refused, in one line, when a stored secret is under a key id the key file does not hold', async () => {
  const other = path.join(dataDir, 'other-keys.json');
  await writeKeyFile(other, { currentId: 'elsewhere', keys: new Map([['elsewhere', generateKey()]]) });
  const currentId = (await new KeyFileKeyring(path.join(dataDir, DEFAULT_KEY_FILE), false).keyring()).currentId;
  for (const role of ['api', 'worker'] as const) {
    const line = await refusal(spawn(role, { PORT: String(await freePort()), SECRETS_KEY_FILE: other }));
    expect(line).toBe(
      `tributary: the secret at tracker shop, privacySecret is encrypted under key id ${currentId}, which the key file ${other} does not hold: use the key file that holds it (SECRETS_KEY_FILE, or the relay's DATA_DIR), or put that key back in this one; see docs/operating.md, "Secrets at rest"`,
    );
  }
});

test('a start is refused when the key of that id is not the one the secrets were sealed with', async () => {
  const file = path.join(dataDir, DEFAULT_KEY_FILE);
  const { currentId } = await new KeyFileKeyring(file, false).keyring();
  const impostor = path.join(dataDir, 'impostor.json');
  await writeKeyFile(impostor, { currentId, keys: new Map([[currentId, generateKey()]]) });
  const line = await refusal(spawn('api', { PORT: String(await freePort()), SECRETS_KEY_FILE: impostor }));
  expect(line).toBe(
    `tributary: the secret at tracker shop, privacySecret does not open under key ${currentId}: that key is not the one it was encrypted with, or the value was altered or copied from another place; see docs/operating.md, "Secrets at rest"`,
  );
});

test('a key file that is missing or malformed is refused in one line that quotes no key', async () => {
  const missing = path.join(dataDir, 'missing.json');
  expect(await refusal(spawn('worker', { SECRETS_KEY_FILE: missing }))).toBe(`tributary: the key file ${missing} (SECRETS_KEY_FILE) does not exist; see docs/operating.md, "Secrets at rest"`);
  const broken = path.join(dataDir, 'broken.json');
  const key = generateKey().toString('base64');
  writeFileSync(broken, `{"current": "a", "keys": {"a": "${key}"`);
  const line = await refusal(spawn('worker', { SECRETS_KEY_FILE: broken }));
  expect(line).toBe(`tributary: the key file ${broken} is not valid JSON; a key file is JSON: {"current": "<key id>", "keys": {"<key id>": "<32 random bytes, base64>"}}`);
  expect(line).not.toContain(key);
  expect(readFileSync(broken, 'utf8')).toContain(key);
});

test('a tracker whose stored JSON is not a tracker does not refuse the start: it is logged, and the others are served', async () => {
  await redis.set(`${prefix}:tracker:hand-edited`, JSON.stringify({ id: 'hand-edited', name: 'Edited', tokens: 'none' }));
  await redis.sadd(`${prefix}:trackers`, 'hand-edited');
  try {
    const port = await freePort();
    const api = spawn('api', { PORT: String(port) });
    await waitReady(port, api);
    const sent = await fetch(`http://127.0.0.1:${port}/v3/event`, { method: 'POST', headers: { Authorization: 'Tracker trk_shop_start_token_0123456789', 'Content-Type': 'application/json' }, body: '{"_event":"served"}' });
    expect(sent.status).toBe(202);
    const logged = api
      .output()
      .split('\n')
      .filter((line) => line.includes('hand-edited'))
      .map((line) => JSON.parse(line) as { level: number; msg: string });
    expect(logged).toEqual([{ level: 50, msg: expect.stringMatching(/^tracker hand-edited cannot be read: its stored JSON is not a tracker \(tokens: .+\); the relay runs the other trackers/), trackerId: 'hand-edited', reason: expect.any(String) }].map((l) => expect.objectContaining(l)));
    await api.stop();
  } finally {
    await redis.srem(`${prefix}:trackers`, 'hand-edited');
  }
});
