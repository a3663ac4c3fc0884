import { execFile } from 'node:child_process';
import path from 'node:path';
import { Redis } from 'ioredis';
import { TrackerResolver } from '../../src/ingest/resolver';
import { TrackerStore } from '../../src/core/trackers/store';
import type { IntegrationView } from '../../src/operator/integration-view';
import type { Tracker } from '../../src/core/trackers/types';
import { CLI } from '../helpers/entries';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis';

/** Runs the CLI as users run it (test/helpers/entries.ts), one process per call. */
const ROOT = path.resolve(__dirname, '../..');
const PUBLIC_URL = 'https://ingest.example';
const prefix = uniquePrefix('cli');
const redis = new Redis(TEST_REDIS_URL);
const store = new TrackerStore(redis, prefix);
const resolver = new TrackerResolver(store, 0);

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { cwd: ROOT, timeout: 20_000, env: { ...process.env, REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: prefix, PUBLIC_URL, ...env } },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
    );
  });
}

async function ok(args: string[]): Promise<string> {
  const r = await cli(args);
  expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: '' });
  return r.stdout;
}

/** Every failure is one line on stderr, nothing on stdout, and a non-zero exit. */
async function fails(args: string[], env: Record<string, string> = {}): Promise<string> {
  const r = await cli(args, env);
  expect(r.code).not.toBe(0);
  expect(r.stdout).toBe('');
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
  expect(r.stderr).toMatch(/^tributary: /);
  return r.stderr;
}

afterAll(async () => {
  redis.disconnect();
  await deletePrefix(prefix);
});

let shopToken: string;

test('create --json derives the id and prints the token and the integration view', async () => {
  const out = JSON.parse(await ok(['trackers', 'create', '--name', 'Web Shop', '--json'])) as { tracker: Tracker; token: string; integration: IntegrationView };
  expect(out.tracker).toMatchObject({ id: 'web-shop', name: 'Web Shop', timeZone: 'UTC', corsOrigins: ['*'] });
  expect(out.integration).toMatchObject({ trackerId: 'web-shop', baseUrl: PUBLIC_URL, token: out.token });
  expect((await resolver.resolve(out.token))?.id).toBe('web-shop');
});

test('create with every option stores them and prints the view as text', async () => {
  const out = await ok([
    'trackers', 'create', '--name', 'Shop', '--id', 'shop', '--time-zone', 'Europe/Paris',
    '--cors-origin', 'https://shop.example', 'https://www.shop.example', '--rate-limit', '25', '--capture-context',
  ]);
  const stored = await store.get('shop');
  expect(stored).toMatchObject({ name: 'Shop', timeZone: 'Europe/Paris', corsOrigins: ['https://shop.example', 'https://www.shop.example'], rateLimit: { recordsPerSecond: 25 }, captureContext: true });
  shopToken = stored!.tokens[0]!.token;
  expect(out).toContain('Created tracker shop (Shop).');
  expect(out).toContain(`Token: ${shopToken}`);
  expect(out).toContain(`curl -sS '${PUBLIC_URL}/v3/event' -H 'Authorization: Tracker ${shopToken}'`);
  expect(out).toContain(`<img src="${PUBLIC_URL}/v3/event/tracker.gif?_token=${shopToken}&amp;`);
  // Segment's and RudderStack's SDKs, pointed at /v1 with the token as write key.
  const host = new URL(PUBLIC_URL).host;
  expect(out).toContain('Segment / RudderStack SDKs (write key = the token; docs/segment.md)');
  expect(out).toContain(`AnalyticsBrowser.load({ writeKey: "${shopToken}", cdnURL: "${PUBLIC_URL}" }, { integrations: { 'Segment.io': { apiHost: "${host}/v1"`);
  expect(out).toContain(`.apiHost("${host}/v1")`);
  expect(out).toContain(`new Analytics("${shopToken}", { dataPlaneUrl: "${PUBLIC_URL}" })`);
});

test('list prints a table, and JSON with --json', async () => {
  const text = await ok(['trackers', 'list']);
  expect(text.split('\n')[0]).toMatch(/^ID\s+NAME\s+TIME ZONE\s+ACTIVE TOKENS\s+RATE LIMIT\s+DESTINATIONS$/);
  expect(text).toMatch(/^shop\s+Shop\s+Europe\/Paris\s+1\/1\s+25 records\/s\s+0$/m);
  expect(text).toMatch(/^web-shop\s+Web Shop\s+UTC\s+1\/1\s+none\s+0$/m);
  const all = JSON.parse(await ok(['trackers', 'list', '--json'])) as Tracker[];
  expect(all.map((t) => t.id)).toEqual(['shop', 'web-shop']);
});

test('remove asks for --yes, removes the tracker and says what it discarded', async () => {
  const { token } = JSON.parse(await ok(['trackers', 'create', '--name', 'Brief', '--json'])) as { token: string };
  expect(await fails(['trackers', 'remove', 'brief'])).toBe("tributary: required option '--yes' not specified\n");
  expect(await ok(['trackers', 'remove', 'brief', '--yes'])).toBe('Removed tracker brief. Discarded 0 queued records, 0 dead letters and 0 records waiting for a destination.\n');
  expect(await new TrackerResolver(store, 0).resolve(token)).toBeUndefined();
  expect(await fails(['trackers', 'remove', 'brief', '--yes'])).toBe('tributary: No tracker with id "brief".\n');
});

test('list names a tracker it cannot read on stderr, after the others', async () => {
  await redis.set(`${prefix}:tracker:hand-edited`, '{"id":"hand-edited","name":');
  await redis.sadd(`${prefix}:trackers`, 'hand-edited');
  try {
    for (const args of [['trackers', 'list'], ['trackers', 'list', '--json']]) {
      const r = await cli(args);
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: expect.stringMatching(/^tributary: tracker hand-edited cannot be read and is not listed: its stored JSON does not parse \(.+\)\n$/) });
      expect(r.stdout).toContain('web-shop');
    }
  } finally {
    await redis.srem(`${prefix}:trackers`, 'hand-edited');
    await redis.del(`${prefix}:tracker:hand-edited`);
  }
});

test('rotate-token adds a token and show lists both with the first one in the view', async () => {
  const rotated = await ok(['trackers', 'rotate-token', 'shop']);
  const newToken = /^New token for tracker shop: (\S+)$/m.exec(rotated)![1]!;
  expect(rotated).toContain(`tributary trackers revoke-token shop ${shopToken.slice(0, 12)}`);
  expect((await resolver.resolve(newToken))?.id).toBe('shop');
  expect((await resolver.resolve(shopToken))?.id).toBe('shop');

  const shown = await ok(['trackers', 'show', 'shop']);
  expect(shown).toMatch(new RegExp(`^  ${shopToken}\\s+active`, 'm'));
  expect(shown).toMatch(new RegExp(`^  ${newToken}\\s+active`, 'm'));
  expect(shown).toContain(`Authorization: Tracker ${shopToken}`);
  expect(shown).toMatch(/time zone\s+Europe\/Paris/);
});

test('revoke-token by prefix revokes it; show then uses the remaining token', async () => {
  const out = await ok(['trackers', 'revoke-token', 'shop', shopToken.slice(0, 12)]);
  expect(out).toContain(`Revoked token ${shopToken.slice(0, 12)}… of tracker shop`);
  expect(await resolver.resolve(shopToken)).toBeUndefined();

  const shown = JSON.parse(await ok(['trackers', 'show', 'shop', '--json'])) as { tracker: Tracker; integration: IntegrationView };
  const [revoked, active] = shown.tracker.tokens;
  expect(revoked).toMatchObject({ token: shopToken, revokedAt: expect.any(String) });
  expect(active?.revokedAt).toBeUndefined();
  expect(shown.integration.token).toBe(active?.token);
  expect(await ok(['trackers', 'show', 'shop'])).toMatch(new RegExp(`^  ${shopToken}\\s+revoked `, 'm'));
});

test('refuses to revoke the last active token', async () => {
  const tracker = await store.get('shop');
  const last = tracker!.tokens.find((t) => !t.revokedAt)!.token;
  expect(await fails(['trackers', 'revoke-token', 'shop', last])).toMatch(/last active token/);
  expect((await resolver.resolve(last))?.id).toBe('shop');
});

test('errors are one line naming the problem', async () => {
  const cases: Array<[string[], string]> = [
    [['trackers', 'show', 'nope'], 'No tracker with id "nope"'],
    [['trackers', 'create', '--name', 'X', '--time-zone', 'Mars/Olympus'], 'timeZone'],
    [['trackers', 'create', '--name', 'X', '--id', 'shop'], 'Tracker id "shop" is taken'],
    [['trackers', 'create', '--name', 'X', '--rate-limit', 'fast'], '--rate-limit'],
    [['trackers', 'create'], "required option '--name <name>'"],
    [['trackers', 'revoke-token', 'shop', 'trk_nosuchtoken'], 'no token starting with'],
  ];
  const messages = await Promise.all(cases.map(([args]) => fails(args)));
  cases.forEach(([, expected], i) => expect(messages[i]).toContain(expected));
});

test('an unreachable Redis is reported with its URL and the fix', async () => {
  const message = await fails(['trackers', 'list'], { REDIS_URL: 'redis://127.0.0.1:1' });
  expect(message).toContain('cannot reach Redis at redis://127.0.0.1:1');
  expect(message).toContain('REDIS_URL');
});
