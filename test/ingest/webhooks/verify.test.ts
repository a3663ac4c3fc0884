import { createHmac } from 'node:crypto';
import { verifyDelivery, type Headers } from '../../../src/ingest/webhooks/verify';
import { WebhookSourceSchema, type WebhookSource } from '../../../src/core/trackers/types';

/** Signature checks against each provider's own published test vectors, and the ways they fail. */
const source = (fields: Record<string, unknown>): WebhookSource => WebhookSourceSchema.parse({ id: 's', ...fields });
const body = (text: string) => Buffer.from(text);

test('GitHub: the documented example (secret "It\'s a Secret to Everybody", body "Hello, World!")', async () => {
  const s = source({ type: 'github', secret: "It's a Secret to Everybody" });
  const headers = { 'x-hub-signature-256': 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17' };
  expect(await verifyDelivery(s, headers, body('Hello, World!'), Date.now())).toEqual({ ok: true });
  expect(await verifyDelivery(s, headers, body('Hello, World?'), Date.now())).toMatchObject({ ok: false, reason: 'bad-signature' });
  expect(await verifyDelivery(s, {}, body('Hello, World!'), Date.now())).toMatchObject({ ok: false, reason: 'missing-header' });
  expect(await verifyDelivery(s, { 'x-hub-signature-256': 'sha1=abc' }, body('x'), Date.now())).toMatchObject({ ok: false, reason: 'malformed-header' });
});

test('Slack: the documented example request', async () => {
  const s = source({ type: 'slack', secret: '8f742231b10e8888abcd99yyyzzz85a5' });
  const text =
    'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
  const headers: Headers = { 'x-slack-request-timestamp': '1531420618', 'x-slack-signature': 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503' };
  expect(await verifyDelivery(s, headers, body(text), 1531420618_000 + 60_000)).toEqual({ ok: true });
  expect(await verifyDelivery(s, headers, body(text), 1531420618_000 + 301_000)).toMatchObject({ ok: false, reason: 'timestamp-outside-tolerance' });
  expect(await verifyDelivery(s, { ...headers, 'x-slack-signature': 'v0=00' }, body(text), 1531420618_000)).toMatchObject({ ok: false, reason: 'bad-signature' });
});

test('Standard Webhooks: the specification’s test vector, checked by its library', async () => {
  const s = source({ type: 'standard-webhooks', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' });
  const headers: Headers = { 'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek', 'webhook-timestamp': '1614265330', 'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=' };
  const now = jest.spyOn(Date, 'now').mockReturnValue(1614265330_000 + 30_000);
  try {
    expect(await verifyDelivery(s, headers, body('{"test": 2432232314}'), Date.now())).toEqual({ ok: true });
    expect(await verifyDelivery(s, headers, body('{"test": 2432232315}'), Date.now())).toMatchObject({ ok: false, reason: 'bad-signature' });
    now.mockReturnValue(1614265330_000 + 3_600_000);
    expect(await verifyDelivery(s, headers, body('{"test": 2432232314}'), Date.now())).toMatchObject({ ok: false, reason: 'timestamp-outside-tolerance' });
  } finally {
    now.mockRestore();
  }
  expect(await verifyDelivery(s, { 'webhook-id': 'x' }, body('{}'), Date.now())).toMatchObject({ ok: false, reason: 'missing-header', message: 'webhook-timestamp is missing' });
});

test('Stripe: t= and one or more v1= over <t>.<body>, five minutes either way', async () => {
  const secret = 'whsec_test_secret';
  const s = source({ type: 'stripe', secret });
  const t = 1_700_000_000;
  const payload = '{"id":"evt_1","type":"charge.succeeded"}';
  const v1 = createHmac('sha256', secret).update(`${t}.${payload}`).digest('hex');
  const at = t * 1000;
  expect(await verifyDelivery(s, { 'stripe-signature': `t=${t},v1=${v1}` }, body(payload), at)).toEqual({ ok: true });
  // During Stripe's own secret roll an endpoint gets one v1 per secret: any one that matches will do.
  expect(await verifyDelivery(s, { 'stripe-signature': `t=${t},v1=${'0'.repeat(64)},v1=${v1},v0=abc` }, body(payload), at)).toEqual({ ok: true });
  expect(await verifyDelivery(s, { 'stripe-signature': `t=${t},v1=${v1}` }, body(payload), at + 301_000)).toMatchObject({ ok: false, reason: 'timestamp-outside-tolerance' });
  expect(await verifyDelivery(s, { 'stripe-signature': `t=${t},v0=${v1}` }, body(payload), at)).toMatchObject({ ok: false, reason: 'malformed-header' });
  expect(await verifyDelivery(s, { 'stripe-signature': `t=${t},v1=${v1}` }, body(`${payload} `), at)).toMatchObject({ ok: false, reason: 'bad-signature' });
});

test('Shopify: base64 HMAC-SHA256 of the body', async () => {
  const s = source({ type: 'shopify', secret: 'shpss_client_secret' });
  const payload = '{"id":820982911946154508,"email":"jon@example.com"}';
  const good = createHmac('sha256', 'shpss_client_secret').update(payload).digest('base64');
  expect(await verifyDelivery(s, { 'x-shopify-hmac-sha256': good }, body(payload), Date.now())).toEqual({ ok: true });
  expect(await verifyDelivery(s, { 'x-shopify-hmac-sha256': good.replace(/^./, 'A') }, body(payload), Date.now())).toMatchObject({ ok: false, reason: 'bad-signature' });
});

test('generic hmac: header, algorithm, encoding, prefix and an optional timestamp', async () => {
  const s = source({ type: 'hmac', secret: 'generic-secret', hmac: { header: 'X-Signature', algorithm: 'sha512', encoding: 'base64', signaturePrefix: 'sig=', timestampHeader: 'X-Timestamp', toleranceSeconds: 60 } });
  const now = 1_800_000_000_000;
  const ts = String(now / 1000);
  const sig = createHmac('sha512', 'generic-secret').update(`${ts}.{"a":1}`).digest('base64');
  expect(await verifyDelivery(s, { 'x-signature': `sig=${sig}`, 'x-timestamp': ts }, body('{"a":1}'), now)).toEqual({ ok: true });
  expect(await verifyDelivery(s, { 'x-signature': `sig=${sig}`, 'x-timestamp': ts }, body('{"a":1}'), now + 61_000)).toMatchObject({ ok: false, reason: 'timestamp-outside-tolerance' });
  expect(await verifyDelivery(s, { 'x-signature': sig, 'x-timestamp': ts }, body('{"a":1}'), now)).toMatchObject({ ok: false, reason: 'malformed-header' });
  expect(await verifyDelivery(s, { 'x-signature': `sig=${sig}` }, body('{"a":1}'), now)).toMatchObject({ ok: false, reason: 'missing-header' });
});

test('after a rotation the previous secret works until its grace period ends', async () => {
  const sign = (secret: string) => `sha256=${createHmac('sha256', secret).update('{}').digest('hex')}`;
  const now = Date.parse('2026-11-24T12:00:00Z');
  const s = source({ type: 'github', secret: 'new-secret-123', previousSecret: 'old-secret-123', previousSecretUntil: '2026-11-25T12:00:00Z' });
  expect(await verifyDelivery(s, { 'x-hub-signature-256': sign('old-secret-123') }, body('{}'), now)).toEqual({ ok: true });
  expect(await verifyDelivery(s, { 'x-hub-signature-256': sign('new-secret-123') }, body('{}'), now)).toEqual({ ok: true });
  expect(await verifyDelivery(s, { 'x-hub-signature-256': sign('old-secret-123') }, body('{}'), Date.parse('2026-11-25T12:00:01Z'))).toMatchObject({ ok: false, reason: 'bad-signature' });
});
