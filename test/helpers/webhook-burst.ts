import { createHmac, randomUUID } from 'node:crypto';
import examples from '@octokit/webhooks-examples';
import { Webhook } from 'standardwebhooks';
import type { WebhookSource } from '../../src/core/trackers/types';
import { seededRandom } from './seeded-random';

/**
 * Webhook deliveries as real senders make them, wide and nested: every recorded GitHub example,
 * Shopify orders with 18-digit ids and line items, SendGrid event batches (a JSON array), CloudEvents
 * through Standard Webhooks, Slack slash commands and interactions (forms), Twilio status callbacks
 * (forms). Between them they give the events table about 240 columns, most of them JSON.
 */

export const BURST_SOURCES: ReadonlyArray<Pick<WebhookSource, 'type' | 'secret'> & { id: string; hmac?: WebhookSource['hmac'] }> = [
  { id: 'github', type: 'github', secret: 'github-burst-secret' },
  { id: 'shopify', type: 'shopify', secret: 'shopify-burst-secret' },
  { id: 'sendgrid', type: 'hmac', secret: 'sendgrid-burst-secret', hmac: { header: 'X-Burst-Signature', algorithm: 'sha256', encoding: 'base64', signaturePrefix: '', toleranceSeconds: 300 } },
  { id: 'cloudevents', type: 'standard-webhooks', secret: `whsec_${Buffer.from('cloudevents-burst-secret').toString('base64')}` },
  { id: 'slack', type: 'slack', secret: 'slack-burst-secret' },
  { id: 'twilio', type: 'hmac', secret: 'twilio-burst-secret', hmac: { header: 'X-Twilio-Burst', algorithm: 'sha1', encoding: 'base64', signaturePrefix: '', toleranceSeconds: 300 } },
];

export interface BurstDelivery {
  source: string;
  contentType: string;
  body: string;
  /** Headers that do not depend on the send time (signatures of timed schemes are made by `sign`). */
  headers: Record<string, string>;
}

const secretOf = (id: string) => BURST_SOURCES.find((s) => s.id === id)!.secret;
const hmacOf = (algorithm: string, secret: string, text: string, encoding: 'hex' | 'base64') => createHmac(algorithm, secret).update(text).digest(encoding);

function shopifyOrder(random: () => number, n: number): string {
  // 18-digit ids, beyond 2^53: written as JSON numbers, as Shopify does.
  const id = () => `45${String(Math.floor(random() * 1e15)).padStart(16, '0')}`;
  const address = `{"first_name":"Ada","last_name":"Lovelace","address1":"${n} Analytical St","city":"London","zip":"N1","country":"GB","latitude":51.5${n % 10},"longitude":-0.1${n % 7}}`;
  const line = () =>
    `{"id":${id()},"variant_id":${id()},"product_id":${id()},"title":"Engine part ${Math.floor(random() * 1000)}","quantity":${1 + (n % 3)},"price":"19.99","sku":"SKU-${n}","properties":[{"name":"gift","value":"yes"}],"tax_lines":[{"price":"1.00","rate":0.06,"title":"VAT"}],"price_set":{"shop_money":{"amount":"19.99","currency_code":"GBP"},"presentment_money":{"amount":"23.10","currency_code":"EUR"}}}`;
  const orderId = id();
  const extra = Array.from({ length: 30 }, (_, k) => `"note_attribute_${k}_${n % 4}":${k % 2 ? `"${'value '.repeat(k)}"` : k}`).join(',');
  return `{"id":${orderId},"admin_graphql_api_id":"gid://shopify/Order/${orderId}","app_id":580111,"browser_ip":"203.0.113.${n % 250}","buyer_accepts_marketing":${n % 2 === 0},"cancel_reason":null,"cart_token":"${randomUUID()}","checkout_id":${id()},"confirmed":true,"contact_email":"buyer${n}@example.com","created_at":"2026-11-2${n % 9}T10:00:00Z","currency":"GBP","current_subtotal_price":"59.97","customer":{"id":${id()},"email":"buyer${n}@example.com","default_address":${address},"tags":"vip"},"line_items":[${Array.from({ length: 1 + (n % 6) }, line).join(',')}],"shipping_address":${address},"billing_address":${address},"order_number":${1000 + n},"total_price":"64.97","fulfillments":[],"refunds":[],"shipping_lines":[{"id":${id()},"price":"5.00","title":"Standard"}],${extra}}`;
}

/** The 1 310 deliveries of one burst; `copy` makes each delivery id new, as a later burst of the same payloads. */
export function burstDeliveries(copy = 0, seed = 42): BurstDelivery[] {
  const random = seededRandom(seed + copy);
  const out: BurstDelivery[] = [];
  for (const { name, examples: payloads } of examples as Array<{ name: string; examples: unknown[] }>) {
    for (const payload of payloads) {
      const body = JSON.stringify(payload);
      out.push({ source: 'github', contentType: 'application/json', body, headers: { 'X-GitHub-Event': name, 'X-GitHub-Delivery': randomUUID(), 'X-Hub-Signature-256': `sha256=${hmacOf('sha256', secretOf('github'), body, 'hex')}` } });
    }
  }
  for (let n = 0; n < 882; n++) {
    const body = shopifyOrder(random, n);
    out.push({ source: 'shopify', contentType: 'application/json', body, headers: { 'X-Shopify-Topic': 'orders/create', 'X-Shopify-Webhook-Id': randomUUID(), 'X-Shopify-Triggered-At': '2026-11-27T10:00:00Z', 'X-Shopify-Hmac-Sha256': hmacOf('sha256', secretOf('shopify'), body, 'base64') } });
  }
  for (let n = 0; n < 25; n++) {
    const body = JSON.stringify(
      Array.from({ length: 1 + (n % 4) }, (_, k) => ({ email: `user${n}@example.com`, timestamp: 1795900000 + n, 'smtp-id': `<${randomUUID()}@example.com>`, event: ['processed', 'delivered', 'open', 'click'][k], category: ['welcome', 'onboarding'], sg_event_id: randomUUID(), sg_message_id: `${randomUUID()}.filter0001`, useragent: 'Mozilla/5.0', ip: '198.51.100.7', url: 'https://example.com/welcome', asm_group_id: 10, unique_args: { plan: 'pro', cohort: n } })),
    );
    out.push({ source: 'sendgrid', contentType: 'application/json', body, headers: { 'X-Burst-Signature': hmacOf('sha256', secretOf('sendgrid'), body, 'base64') } });
  }
  for (let n = 0; n < 25; n++) {
    const body = JSON.stringify({ specversion: '1.0', type: `com.example.invoice.${n % 2 ? 'paid' : 'created'}`, source: '/billing/invoices', id: randomUUID(), time: '2026-11-27T10:00:00Z', datacontenttype: 'application/json', subject: `invoice-${n}`, data: { invoice: { id: `in_${n}`, amount: 1299 + n, lines: [{ sku: 'A', qty: 1 }], customer: { id: `cus_${n}`, address: { city: 'Paris' } } } } });
    out.push({ source: 'cloudevents', contentType: 'application/json', body, headers: { 'webhook-id': `msg_${randomUUID()}` } });
  }
  for (let n = 0; n < 25; n++) {
    const body =
      n % 2 === 0
        ? new URLSearchParams({ token: 'x', team_id: 'T1', team_domain: 'acme', channel_id: 'C1', channel_name: 'sales', user_id: `U${n}`, user_name: `user${n}`, command: '/deal', text: `won ${n}`, response_url: 'https://hooks.slack.com/commands/1', trigger_id: `${n}.${randomUUID()}` }).toString()
        : new URLSearchParams({ payload: JSON.stringify({ type: 'block_actions', trigger_id: `${n}.${randomUUID()}`, user: { id: `U${n}`, username: `user${n}` }, team: { id: 'T1' }, actions: [{ action_id: 'approve', value: String(n), block_id: 'b1' }], container: { type: 'message', channel_id: 'C1' } }) }).toString();
    out.push({ source: 'slack', contentType: 'application/x-www-form-urlencoded', body, headers: {} });
  }
  for (let n = 0; n < 24; n++) {
    const body = new URLSearchParams({ AccountSid: 'AC123', MessageSid: `SM${randomUUID().replace(/-/g, '')}`, MessageStatus: ['sent', 'delivered', 'failed'][n % 3]!, To: `+3361234${String(n).padStart(4, '0')}`, From: '+15005550006', ApiVersion: '2010-04-01', SmsStatus: 'sent', ErrorCode: n % 3 === 2 ? '30003' : '' }).toString();
    out.push({ source: 'twilio', contentType: 'application/x-www-form-urlencoded', body, headers: { 'X-Twilio-Burst': hmacOf('sha1', secretOf('twilio'), body, 'base64') } });
  }
  return out;
}

/** The headers of a delivery sent now: the timed schemes (Slack, Standard Webhooks) are signed at send time. */
export function signedHeaders(d: BurstDelivery, now = Date.now()): Record<string, string> {
  const seconds = Math.floor(now / 1000);
  if (d.source === 'slack') return { ...d.headers, 'X-Slack-Request-Timestamp': String(seconds), 'X-Slack-Signature': `v0=${hmacOf('sha256', secretOf('slack'), `v0:${seconds}:${d.body}`, 'hex')}` };
  if (d.source === 'cloudevents') {
    const id = d.headers['webhook-id']!;
    return { ...d.headers, 'webhook-timestamp': String(seconds), 'webhook-signature': new Webhook(secretOf('cloudevents')).sign(id, new Date(seconds * 1000), d.body) };
  }
  return d.headers;
}
