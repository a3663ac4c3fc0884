import { cliFixture } from './run-cli';
import { seedTracker } from './seed';

const { store, cli } = cliFixture('cli-privacy');

test('privacy set, list, remove; the secret only on request; the integration view shows the rules', async () => {
  await seedTracker(store, 'shop');
  expect(await cli.ok(['privacy', 'list', 'shop'])).toMatch(/no personal-data rules: every property is stored as sent/);

  expect(await cli.ok(['privacy', 'set', 'shop', 'email', 'mask-email'])).toMatch(/^email\s+mask-email\s+stored as first character/m);
  await cli.ok(['privacy', 'set', 'shop', '/contacts/*/phone', 'hash']);
  await cli.ok(['privacy', 'set', 'shop', '_ip', 'truncate-ip']);
  const listed = JSON.parse(await cli.ok(['privacy', 'list', 'shop', '--json'])) as { rules: Array<{ property: string; action: string }> };
  expect(listed.rules.map((r) => `${r.property}=${r.action}`)).toEqual(['email=mask-email', '/contacts/*/phone=hash', '_ip=truncate-ip']);

  const secret = (await store.get('shop'))!.privacySecret!;
  expect(await cli.ok(['privacy', 'list', 'shop'])).not.toContain(secret);
  expect(await cli.ok(['privacy', 'list', 'shop', '--show-secret'])).toContain(`HMAC secret: ${secret}`);
  expect(JSON.parse(await cli.ok(['privacy', 'list', 'shop', '--show-secret', '--json']))).toMatchObject({ secret, rules: expect.any(Array) });
  expect(JSON.parse(await cli.ok(['privacy', 'list', 'shop', '--json']))).not.toHaveProperty('secret');
  expect(await cli.ok(['trackers', 'list', '--json'])).not.toContain(secret);

  const shown = await cli.ok(['trackers', 'show', 'shop']);
  expect(shown).toMatch(/personal data\s+email: mask-email, \/contacts\/\*\/phone: hash, _ip: truncate-ip/);
  expect(shown).toMatch(/Personal data\n {2}email: mask-email, stored as first character \+ \*\*\*@ \+ domain/);

  expect(await cli.ok(['privacy', 'remove', 'shop', '_ip'])).not.toMatch(/_ip/);
});

test('invalid rules are refused with the rule named', async () => {
  await seedTracker(store, 'strict');
  expect(await cli.fails(['privacy', 'set', 'strict', 'email', 'encrypt'])).toMatch(/'encrypt' is invalid for argument 'action'\. expected one of drop, hash, truncate-ip, mask-email/);
  expect(await cli.fails(['privacy', 'set', 'strict', '_uid', 'drop'])).toMatch(/privacyRules\.0\.property: rule _uid → drop: _uid takes hash, not drop/);
  expect(await cli.fails(['privacy', 'set', 'strict', '/a~x', 'drop'])).toMatch(/rule \/a~x → drop: \/a~x is not a JSON pointer/);
  expect(await cli.fails(['privacy', 'remove', 'strict', 'email'])).toMatch(/has no personal-data rule for email/);
});
