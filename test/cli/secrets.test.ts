import { TrackerStore } from '../../src/core/trackers/store';
import { TrackerSchema } from '../../src/core/trackers/types';
import { cliFixture } from './run-cli';

/** `tributary secrets`: what status counts, reencrypt sealing what was plain, and each refusal in one line. */
const { prefix, redis, cli } = cliFixture('cli-secrets');

test('status counts the secrets under each key and the plain ones; reencrypt seals them; refusals are one line', async () => {
  await cli.ok(['trackers', 'create', '--name', 'Shop', '--id', 'shop']);
  await cli.ok(['sources', 'add', 'shop', '--type', 'github', '--secret', 'cli-secrets-webhook-secret']);
  // A tracker stored before encryption existed.
  await new TrackerStore(redis, prefix).create(TrackerSchema.parse({ id: 'old', name: 'Old', tokens: [{ token: 'trk_old_cli_secrets_token_0123456' }], sources: [{ id: 'github', type: 'github', secret: 'old-plain-webhook-secret' }] }));
  const { currentId } = await cli.keys.keyring();

  const status = await cli.ok(['secrets', 'status']);
  expect(status).toContain(`Key file ${cli.keys.file}, current key ${currentId}`);
  expect(status).toMatch(new RegExp(`${currentId}\\s+1\\s+yes \\(current\\)`));
  expect(status).toMatch(/plain\s+1\s+not yet encrypted: at the next start, or now with tributary secrets reencrypt/);

  expect(await cli.ok(['secrets', 'reencrypt'])).toContain('Encrypted the secrets of 1 tracker under key');
  expect(JSON.parse(await cli.ok(['secrets', 'status', '--json']))).toMatchObject({ plain: 0, total: 2, byKey: [{ keyId: currentId, secrets: 2, current: true }] });
  expect(await redis.get(`${prefix}:tracker:old`)).not.toContain('old-plain-webhook-secret');

  expect(await cli.fails(['secrets', 'drop-key', currentId])).toBe(`tributary: ${currentId} is the current key: make another one current first (tributary secrets use-key <id>), then run tributary secrets reencrypt\n`);
  expect(await cli.fails(['secrets', 'use-key', 'nope'])).toBe(`tributary: the key file ${cli.keys.file} holds no key nope (it holds ${currentId})\n`);
  expect(await cli.fails(['secrets', 'add-key', 'has:colon'])).toMatch(/^tributary: a key id is 1 to 64 letters, digits, _, \. and -/);
});
