import { createHmac, randomUUID } from 'node:crypto';
import path from 'node:path';
import { queryWarehouse } from '../../connectors/local';
import { DeadLetterStore } from '../../jobs/delivery/dead-letters';
import { deliveryKeys } from '../../jobs/delivery/keys';
import { DEFAULT_KEY_FILE, KeyFileKeyring } from '../../src/core/secrets/key-file';
import { TrackerStore } from '../../src/core/trackers/store';
import { TrackerSchema } from '../../src/core/trackers/types';
import { cliRunner } from '../cli/run-cli';
import { freePort } from '../helpers/redis-server';
import { tributaryProcesses, waitReady, type TributaryProcess } from '../helpers/tributary-process';
import { waitFor } from '../helpers/wait';

/**
 * A key rotation under steady webhook traffic, the API and the worker as processes of their own:
 * a signed GitHub sender runs throughout while the key file gets a new key, makes it current, every
 * secret is encrypted again and the old key is dropped, each step with the CLI as an operator
 * would. No delivery is refused (every signature still checks), none fails or is dead-lettered,
 * every record lands once, the personal-data HMAC key is the same throughout, and Redis holds
 * nothing under the old key afterwards.
 */
jest.setTimeout(120_000);

const { prefix, dataDir, redis, spawn } = tributaryProcesses('rotation', { LOG_LEVEL: 'info', DELIVERY_DISCOVER_INTERVAL_MS: '100' });
const cli = cliRunner(prefix);
afterAll(() => cli.cleanup());

const SECRET = `rotation-webhook-secret-${randomUUID()}`;
const EMAIL = 'ada@example.com';
const keys = new KeyFileKeyring(path.join(dataDir, DEFAULT_KEY_FILE), true);
const store = new TrackerStore(redis, prefix, keys);

/** The CLI on the relay's DATA_DIR (its key file), as the operator runs it beside the processes. */
async function operator(...args: string[]): Promise<string> {
  const r = await cli.run(args, { DATA_DIR: dataDir });
  expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: '' });
  return r.stdout;
}

/** Waits until each process has logged that it read the key file with these keys. */
async function everyProcessHas(procs: TributaryProcess[], currentKeyId: string, keyIds: string[]): Promise<void> {
  const wanted = (line: string) => {
    if (!line.includes('secrets key file reloaded')) return false;
    const logged = JSON.parse(line) as { currentKeyId: string; keyIds: string[] };
    return logged.currentKeyId === currentKeyId && [...logged.keyIds].sort().join() === [...keyIds].sort().join();
  };
  await waitFor(() => procs.every((p) => p.output().split('\n').some(wanted)), { timeoutMs: 10_000, message: `every process on keys ${keyIds.join(', ')} (current ${currentKeyId})` });
}

test('rotation under steady webhook traffic: no signature refused, no delivery failed, every record once, nothing left under the old key', async () => {
  await store.create(
    TrackerSchema.parse({
      id: 'shop',
      name: 'Shop',
      tokens: [{ token: 'trk_rotation_public_token_0123456789' }],
      sources: [{ id: 'github', type: 'github', secret: SECRET }],
      privacyRules: [{ property: 'email', action: 'hash' }],
      destinations: [{ id: 'wh', type: 'local', settings: { releaseAfterIdleMs: 60_000 } }],
    }),
  );
  await store.create(TrackerSchema.parse({ id: 'blog', name: 'Blog', tokens: [{ token: 'trk_rotation_blog_token_0123456789' }], sources: [{ id: 'github', type: 'github', secret: 'blog-webhook-secret' }] }));
  const hmacKey = (await store.get('shop'))!.privacySecret!;
  const oldKey = (await keys.keyring()).currentId;
  const port = await freePort();
  const procs = [spawn('api', { PORT: String(port) }), spawn('worker')];
  await waitReady(port, procs[0]!);

  // The sender: signed deliveries, one after another on 4 connections, until told to stop.
  const sent: string[] = [];
  const refused: string[] = [];
  let sending = true;
  const sender = async () => {
    while (sending) {
      const id = randomUUID();
      const body = JSON.stringify({ ref: 'refs/heads/main', email: EMAIL, n: sent.length });
      const res = await fetch(`http://127.0.0.1:${port}/v3/webhooks/shop/github`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-GitHub-Event': 'push', 'X-GitHub-Delivery': id, 'X-Hub-Signature-256': `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}` },
        body,
      });
      if (res.status === 200) sent.push(id);
      else refused.push(`${res.status} ${await res.text()}`);
    }
  };
  const deliveredSoFar = (n: number) => waitFor(() => sent.length >= n, { timeoutMs: 20_000, message: `${n} deliveries sent` });
  const senders = Array.from({ length: 4 }, sender);
  try {
    // Each step as docs/operating.md gives it, with traffic flowing between steps.
    await deliveredSoFar(50);
    expect(await operator('secrets', 'add-key', 'k-new')).toContain('Added key k-new.');
    await everyProcessHas(procs, oldKey, [oldKey, 'k-new']);
    await deliveredSoFar(sent.length + 50);
    await operator('secrets', 'use-key', 'k-new');
    // A change made at once, before the processes look at the file again: written under the new key.
    await operator('trackers', 'update', 'blog', '--name', 'Blog (renamed)');
    await everyProcessHas(procs, 'k-new', [oldKey, 'k-new']);
    await deliveredSoFar(sent.length + 50);
    expect(await operator('secrets', 'reencrypt')).toContain('Encrypted the secrets of 1 tracker under key k-new.');
    const status = JSON.parse(await operator('secrets', 'status', '--json'));
    expect(status).toMatchObject({ currentKeyId: 'k-new', plain: 0, byKey: [{ keyId: 'k-new', secrets: 3 }, { keyId: oldKey, secrets: 0 }] });
    await operator('secrets', 'drop-key', oldKey);
    await everyProcessHas(procs, 'k-new', ['k-new']);
    await deliveredSoFar(sent.length + 50);
  } finally {
    sending = false;
    await Promise.allSettled(senders);
  }

  expect(refused).toEqual([]);
  const file = path.join(dataDir, 'warehouse', 'shop.duckdb');
  const events = await waitFor(
    async () => {
      const r = await queryWarehouse(file, "select * from events where _event = 'github.push'", { lockTimeoutMs: 2000 }).catch(() => undefined);
      return r && r.rows.length >= sent.length ? r : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 250, message: `${sent.length} events in the warehouse` },
  );
  const ids = events.rows.map((row) => row[events.columns.indexOf('_id')]);
  expect(ids).toHaveLength(sent.length);
  expect(new Set(ids)).toEqual(new Set(sent));
  // The personal-data HMAC key was encrypted again, not changed: the same pseudonym before and after.
  const hashed = new Set(events.rows.map((row) => JSON.stringify(row[events.columns.indexOf('email')] ?? JSON.parse(String(row[events.columns.indexOf('_properties')])).email)));
  expect(hashed).toEqual(new Set([JSON.stringify(createHmac('sha256', hmacKey).update(EMAIL).digest('hex'))]));
  expect((await store.get('shop'))!.privacySecret).toBe(hmacKey);
  expect(await new DeadLetterStore(redis, deliveryKeys(prefix, { trackerId: 'shop', destinationId: 'wh' })).count()).toBe(0);

  // Nothing in Redis under the old key, nor any error in either process's log.
  const raw: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    for (const key of found) if ((await redis.type(key)) === 'string') raw.push((await redis.get(key))!);
  } while (cursor !== '0');
  expect(raw.join('\n')).toContain('enc:v1:k-new:');
  expect(raw.join('\n')).not.toContain(`enc:v1:${oldKey}:`);
  for (const p of procs) expect(p.output()).not.toMatch(/"level":(50|60)/);
});
