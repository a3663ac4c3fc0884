import { createHmac } from 'node:crypto';
import { cliFixture } from './run-cli';
import { seedTracker } from './seed';
import { verifyDelivery } from '../../src/ingest/webhooks/verify';

const { prefix, store, cli } = cliFixture('cli-src');

interface SourceView {
  id: string;
  type: string;
  secret: string;
  url: string;
  previousSecret?: string;
  previousSecretUntil?: string;
  mapping: Record<string, unknown>;
}

test('sources add prints the URL and a generated secret; list, show, rotate-secret and remove', async () => {
  await seedTracker(store, 'shop');
  const added = JSON.parse(await cli.ok(['sources', 'add', 'shop', '--type', 'github', '--json'])) as SourceView;
  expect(added).toMatchObject({ id: 'github', type: 'github', url: expect.stringMatching(/\/v3\/webhooks\/shop\/github$/) });
  expect(added.secret.length).toBeGreaterThanOrEqual(40);
  expect(await cli.ok(['sources', 'list', 'shop'])).toMatch(/^github\s+github\s+http.*\/v3\/webhooks\/shop\/github$/m);

  const rotated = JSON.parse(await cli.ok(['sources', 'rotate-secret', 'shop', 'github', '--grace-hours', '2', '--json'])) as SourceView;
  expect(rotated.secret).not.toBe(added.secret);
  expect(rotated.previousSecret).toBe(added.secret);
  // The stored source accepts both secrets during the grace period.
  const stored = (await store.get('shop'))!.sources[0]!;
  for (const secret of [added.secret, rotated.secret]) {
    const sig = `sha256=${createHmac('sha256', secret).update('{}').digest('hex')}`;
    expect(await verifyDelivery(stored, { 'x-hub-signature-256': sig }, Buffer.from('{}'), Date.now())).toEqual({ ok: true });
  }
  expect(await cli.ok(['sources', 'show', 'shop', 'github'])).toContain('the previous secret is accepted until');

  expect(await cli.ok(['sources', 'remove', 'shop', 'github'])).toBe('Removed source github of tracker shop.\n');
  expect((await store.get('shop'))!.sources).toEqual([]);
});

test('providers that issue their own secret need --secret; hmac needs its header; mapping rules are checked', async () => {
  await seedTracker(store, 'saas');
  expect(await cli.fails(['sources', 'add', 'saas', '--type', 'stripe'])).toMatch(/Stripe issues the signing secret/);
  expect(await cli.fails(['sources', 'add', 'saas', '--type', 'hmac'])).toMatch(/hmac: an hmac source needs hmac settings/);
  expect(await cli.fails(['sources', 'add', 'saas', '--type', 'hmac', '--header', 'X-Sig', '--map', '_event=body:/type'])).toMatch(/"_event=body:\/type" is not a rule/);
  const crm = JSON.parse(await cli.ok(['sources', 'add', 'saas', '--type', 'hmac', '--id', 'crm', '--header', 'X-Sig', '--map', '_event=header:X-Event', '_id=pointer:/meta/id', '--json'])) as SourceView;
  expect(crm.mapping).toEqual({ _event: { header: 'X-Event', prefix: '' }, _id: { pointer: '/meta/id', prefix: '' } });
  expect(await cli.fails(['sources', 'add', 'saas', '--type', 'hmac', '--id', 'crm', '--header', 'X-Sig'])).toMatch(/has a source "crm" already/);
  expect(await cli.fails(['sources', 'show', 'saas', 'nope'])).toMatch(/has no source "nope"/);
});
