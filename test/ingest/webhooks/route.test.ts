import { createHmac, randomUUID } from 'node:crypto';
import examples from '@octokit/webhooks-examples';
import { Webhook } from 'standardwebhooks';
import { SourceDeliveryLog } from '../../../src/core/trackers/source-deliveries';
import { SourceService } from '../../../src/operator/source-service';
import { startTestApi, type TestApi } from '../../helpers/api';

/**
 * Webhook sources over HTTP: every recorded GitHub example signed and stored whole with its
 * `_event` and delivery id; the other presets with their own headers; refusals named.
 */
let api: TestApi;
let sources: SourceService;
const secret = 'a-github-webhook-secret';

beforeAll(async () => {
  api = await startTestApi();
  sources = new SourceService(api.runtime.store);
  await sources.add(api.tracker.id, { type: 'github', secret });
  await sources.add(api.tracker.id, { type: 'stripe', secret: 'whsec_stripe_test' });
  await sources.add(api.tracker.id, { type: 'shopify', secret: 'shopify-client-secret' });
  await sources.add(api.tracker.id, { type: 'slack', secret: 'slack-signing-secret' });
  await sources.add(api.tracker.id, { type: 'standard-webhooks', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' });
  await sources.add(api.tracker.id, { type: 'hmac', id: 'crm', secret: 'crm-secret-1', hmac: { header: 'X-Crm-Signature' }, mapping: { _event: { header: 'X-Crm-Event', prefix: 'crm.' }, _id: { pointer: '/meta/delivery' }, _uid: { pointer: '/account/owner/id' } } });
});
afterAll(() => api.close());

const path = (source: string) => `/v3/webhooks/${api.tracker.id}/${source}`;
const hmac = (key: string, text: string, enc: 'hex' | 'base64' = 'hex') => createHmac('sha256', key).update(text).digest(enc);
const post = (source: string, raw: string, headers: Record<string, string>, type = 'application/json') => api.http.post(path(source)).set('Content-Type', type).set(headers).send(raw);

const github = (name: string, payload: unknown, delivery = randomUUID()) => {
  const raw = JSON.stringify(payload);
  return post('github', raw, { 'X-GitHub-Event': name, 'X-GitHub-Delivery': delivery, 'X-Hub-Signature-256': `sha256=${hmac(secret, raw)}` });
};

test('every recorded GitHub example is accepted, typed github.<event>[.<action>], keyed by its delivery, and stored whole', async () => {
  const sent: Array<{ id: string; event: string; payload: unknown }> = [];
  for (const { name, examples: payloads } of examples as Array<{ name: string; examples: Array<Record<string, unknown>> }>) {
    for (const payload of payloads) {
      const delivery = randomUUID();
      const res = await github(name, payload, delivery);
      expect(res.status).toBe(200);
      const event = `github.${name}${typeof payload.action === 'string' ? `.${payload.action}` : ''}`;
      expect(res.body).toEqual({ accepted: 1, id: delivery, event });
      sent.push({ id: delivery, event, payload });
    }
  }
  expect(sent.length).toBeGreaterThan(300);
  const queued = new Map((await api.queuedRecords()).map((r) => [r.id, r]));
  for (const s of sent) {
    const r = queued.get(s.id)!;
    expect(r).toMatchObject({ kind: 'event', event: s.event });
    // Through JSON and Redis: every key at every depth, `_links`-style underscores included.
    expect(JSON.parse(JSON.stringify(r.properties))).toEqual(s.payload);
    const login = (s.payload as { sender?: { login?: string } }).sender?.login;
    if (login) expect(r.uid).toBe(login);
  }
});

test('a redelivery (same X-GitHub-Delivery) is answered but stored once; ping is github.ping', async () => {
  const delivery = randomUUID();
  const payload = { zen: 'Keep it logically awesome.', hook_id: 1, _links: { self: 'x' } };
  expect((await github('ping', payload, delivery)).body).toEqual({ accepted: 1, id: delivery, event: 'github.ping' });
  expect((await github('ping', payload, delivery)).body).toEqual({ accepted: 0, duplicate: true, id: delivery, event: 'github.ping' });
});

test('forged, tampered and unsigned deliveries are refused 401 with the reason; an unknown source is a 404', async () => {
  const raw = JSON.stringify({ action: 'opened' });
  const forged = await post('github', raw, { 'X-GitHub-Event': 'issues', 'X-Hub-Signature-256': `sha256=${hmac('wrong-secret', raw)}` });
  expect(forged.status).toBe(401);
  expect(forged.body.error).toMatchObject({ code: 'ERR_WEBHOOK_SIGNATURE', message: expect.stringMatching(/^bad-signature: /) });
  const tampered = await post('github', raw.replace('opened', 'closed'), { 'X-GitHub-Event': 'issues', 'X-Hub-Signature-256': `sha256=${hmac(secret, raw)}` });
  expect(tampered.status).toBe(401);
  const unsigned = await post('github', raw, { 'X-GitHub-Event': 'issues' });
  expect(unsigned.body.error.message).toMatch(/^missing-header: X-Hub-Signature-256 is missing/);
  // The tracker's ingest token does not open a source, nor does a source URL take v3 records.
  const withToken = await api.http.post(path('github')).set('Authorization', `Tracker ${api.token}`).send({ _event: 'x' });
  expect(withToken.status).toBe(401);
  expect((await post('nope', raw, {})).status).toBe(404);
  expect((await api.http.post(`/v3/webhooks/no-such-tracker/github`).send(raw)).body.error.code).toBe('ERR_WEBHOOK_NOT_FOUND');
});

test('Stripe: stripe.<type>, keyed by the event id, timed by created, the customer as _uid; an expired signature is refused', async () => {
  const payload = { id: `evt_${randomUUID().slice(0, 8)}`, object: 'event', type: 'invoice.paid', created: 1_763_900_000, data: { object: { id: 'in_1', object: 'invoice', customer: 'cus_42', amount_paid: 1200 } } };
  const raw = JSON.stringify(payload);
  const sign = (t: number) => ({ 'Stripe-Signature': `t=${t},v1=${hmac('whsec_stripe_test', `${t}.${raw}`)}` });
  const now = Math.floor(Date.now() / 1000);
  const res = await post('stripe', raw, sign(now));
  expect(res.body).toEqual({ accepted: 1, id: payload.id, event: 'stripe.invoice.paid' });
  const stored = (await api.queuedRecords()).find((r) => r.id === payload.id)!;
  expect(stored).toMatchObject({ uid: 'cus_42', eventAt: new Date(payload.created * 1000).toISOString() });
  const old = await post('stripe', raw, sign(now - 600));
  expect(old.status).toBe(401);
  expect(old.body.error.message).toMatch(/^timestamp-outside-tolerance/);
});

test('Shopify: shopify.<topic>, keyed by X-Shopify-Webhook-Id, the customer as _uid', async () => {
  const raw = JSON.stringify({ id: 450789469, email: 'bob@example.com', customer: { id: 207119551, email: 'bob@example.com' }, line_items: [] });
  const id = randomUUID();
  const res = await post('shopify', raw, { 'X-Shopify-Topic': 'orders/create', 'X-Shopify-Webhook-Id': id, 'X-Shopify-Hmac-Sha256': hmac('shopify-client-secret', raw, 'base64'), 'X-Shopify-Triggered-At': '2026-11-24T10:00:00.000Z' });
  expect(res.body).toEqual({ accepted: 1, id, event: 'shopify.orders/create' });
  expect((await api.queuedRecords()).find((r) => r.id === id)).toMatchObject({ uid: '207119551', eventAt: '2026-11-24T10:00:00.000Z' });
});

const slackHeaders = (raw: string, ts = Math.floor(Date.now() / 1000)) => ({ 'X-Slack-Request-Timestamp': String(ts), 'X-Slack-Signature': `v0=${hmac('slack-signing-secret', `v0:${ts}:${raw}`)}` });

test('Slack: the url_verification challenge is answered; events, slash commands and interactive payloads are typed', async () => {
  const challenge = JSON.stringify({ token: 't', challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P', type: 'url_verification' });
  const hello = await post('slack', challenge, slackHeaders(challenge));
  expect(hello.status).toBe(200);
  expect(hello.body).toEqual({ challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' });

  const event = JSON.stringify({ type: 'event_callback', event_id: `Ev${randomUUID().slice(0, 8)}`, event_time: 1_763_900_000, event: { type: 'app_mention', user: 'U061F7AUR', text: '<@U0LAN0Z89> hi' } });
  expect((await post('slack', event, slackHeaders(event))).body).toMatchObject({ accepted: 1, event: 'slack.app_mention' });

  const command = 'command=%2Fdeploy&text=prod&user_id=U2CERLKJA&trigger_id=13345224609.738474920.8088930838d88f008e0';
  expect((await post('slack', command, slackHeaders(command), 'application/x-www-form-urlencoded')).body).toMatchObject({ accepted: 1, id: '13345224609.738474920.8088930838d88f008e0', event: 'slack.command.deploy' });

  const interactive = `payload=${encodeURIComponent(JSON.stringify({ type: 'block_actions', trigger_id: `tr-${randomUUID()}`, user: { id: 'U1' }, actions: [{ action_id: 'approve' }] }))}`;
  const res = await post('slack', interactive, slackHeaders(interactive), 'application/x-www-form-urlencoded');
  expect(res.body).toMatchObject({ accepted: 1, event: 'slack.block_actions' });
  expect((await api.queuedRecords()).find((r) => r.id === res.body.id)).toMatchObject({ uid: 'U1', properties: { payload: { type: 'block_actions', actions: [{ action_id: 'approve' }] } } });
});

test('Standard Webhooks: the payload’s type, keyed by webhook-id', async () => {
  const raw = JSON.stringify({ type: 'invoice.created', timestamp: '2026-11-24T09:00:00Z', data: { id: 'inv_1' } });
  const id = `msg_${randomUUID()}`;
  const signature = new Webhook('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw').sign(id, new Date(), raw);
  const res = await post('standard-webhooks', raw, { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': signature });
  expect(res.body).toEqual({ accepted: 1, id, event: 'invoice.created' });
});

test('a generic HMAC source maps its fields by header and JSON pointer', async () => {
  const raw = JSON.stringify({ meta: { delivery: `d-${randomUUID()}` }, account: { owner: { id: 77 } }, 'key.with dots': { '': [] }, _private: null });
  const res = await post('crm', raw, { 'X-Crm-Signature': hmac('crm-secret-1', raw), 'X-Crm-Event': 'deal.won' });
  expect(res.body).toMatchObject({ accepted: 1, event: 'crm.deal.won' });
  const stored = (await api.queuedRecords()).find((r) => r.id === res.body.id)!;
  expect(stored.uid).toBe('77');
  expect(stored.properties).toEqual(JSON.parse(raw));
});

test('each delivery leaves its verdict in the source’s log: accepted with its event and id, refused with the reason', async () => {
  await sources.add(api.tracker.id, { type: 'hmac', id: 'logged', secret: 'logged-secret', hmac: { header: 'X-Sig', timestampHeader: 'X-Ts' }, mapping: { _event: { header: 'X-Kind' }, _id: { pointer: '/id' } } });
  // The tracker is cached without this source since the tests above (TOKEN_CACHE_TTL_MS).
  api.runtime.resolver.clear();
  const raw = JSON.stringify({ id: 'evt-1' });
  const now = Math.floor(Date.now() / 1000);
  expect((await post('logged', raw, { 'X-Kind': 'paid', 'X-Ts': String(now), 'X-Sig': hmac('logged-secret', `${now}.${raw}`) })).status).toBe(200);
  const old = now - 3600;
  expect((await post('logged', raw, { 'X-Ts': String(old), 'X-Sig': hmac('logged-secret', `${old}.${raw}`) })).status).toBe(401);
  expect((await post('logged', raw, { 'X-Ts': String(now) })).status).toBe(401);
  // Written on the API's connection before each answer, so this read on the same connection sees all three.
  const log = await new SourceDeliveryLog(api.runtime.redis, api.prefix).list(api.tracker.id, 'logged');
  expect(log.map(({ verdict, status, reason, event, id }) => ({ verdict, status, reason, event, id }))).toEqual([
    { verdict: 'refused', status: 401, reason: 'missing-header', event: undefined, id: undefined },
    { verdict: 'refused', status: 401, reason: 'timestamp-outside-tolerance', event: undefined, id: undefined },
    { verdict: 'accepted', status: 200, reason: undefined, event: 'paid', id: 'evt-1' },
  ]);
});
