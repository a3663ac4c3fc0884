import { createHmac, timingSafeEqual } from 'node:crypto';
import { verify as verifyGitHub } from '@octokit/webhooks-methods';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { HmacSettings, WebhookSource } from '../../core/trackers/types';

/** Why a delivery was refused; each is named in the 401 answer and the live view. */
export type SignatureFailure = 'missing-header' | 'malformed-header' | 'bad-signature' | 'timestamp-outside-tolerance';

export type Verdict = { ok: true } | { ok: false; reason: SignatureFailure; message: string };

/** Header names in lower case, one value each (Node joins repeated ones). */
export type Headers = Readonly<Record<string, string | undefined>>;

/** Stripe and Slack refuse deliveries signed more than five minutes away from now; so do we. */
const PROVIDER_TOLERANCE_S = 300;

const OK: Verdict = { ok: true };
const fail = (reason: SignatureFailure, message: string): Verdict => ({ ok: false, reason, message });

function hmac(algorithm: string, secret: string, text: Buffer | string, encoding: 'hex' | 'base64'): string {
  return createHmac(algorithm, secret).update(text).digest(encoding);
}

/** Constant-time comparison of two signatures as text (lengths are not secret). */
function same(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

function withinTolerance(timestamp: string, nowMs: number, toleranceS: number): boolean {
  const t = Number(timestamp);
  return Number.isFinite(t) && Math.abs(nowMs / 1000 - t) <= toleranceS;
}

/** The secrets a delivery may be signed with: the current one, and during a rotation's grace period the previous one. */
export function acceptedSecrets(source: WebhookSource, nowMs: number): string[] {
  const secrets = [source.secret];
  if (source.previousSecret && source.previousSecretUntil && Date.parse(source.previousSecretUntil) > nowMs) secrets.push(source.previousSecret);
  return secrets;
}

/** GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>`, checked by GitHub's own library. */
async function github(secrets: string[], headers: Headers, body: Buffer): Promise<Verdict> {
  const signature = headers['x-hub-signature-256'];
  if (!signature) return fail('missing-header', 'X-Hub-Signature-256 is missing: set a secret on the GitHub webhook');
  if (!/^sha256=[0-9a-f]{64}$/.test(signature)) return fail('malformed-header', 'X-Hub-Signature-256 is not sha256=<64 hex digits>');
  const text = body.toString('utf8');
  for (const secret of secrets) if (await verifyGitHub(secret, text, signature)) return OK;
  return fail('bad-signature', 'X-Hub-Signature-256 does not match the body and the source’s secret');
}

/** Stripe: `Stripe-Signature: t=<unix>,v1=<hex>[,v1=…]`, HMAC-SHA256 of `<t>.<body>`, five minutes' tolerance. */
function stripe(secrets: string[], headers: Headers, body: Buffer, nowMs: number): Verdict {
  const header = headers['stripe-signature'];
  if (!header) return fail('missing-header', 'Stripe-Signature is missing');
  const parts = header.split(',').map((p) => p.trim().split('='));
  const t = parts.find(([k]) => k === 't')?.[1];
  const v1 = parts.filter(([k, v]) => k === 'v1' && v).map(([, v]) => v!);
  if (!t || v1.length === 0) return fail('malformed-header', 'Stripe-Signature has no t= or no v1= signature');
  if (!withinTolerance(t, nowMs, PROVIDER_TOLERANCE_S)) return fail('timestamp-outside-tolerance', `Stripe-Signature t=${t} is more than ${PROVIDER_TOLERANCE_S} s from now`);
  const signed = Buffer.concat([Buffer.from(`${t}.`), body]);
  for (const secret of secrets) {
    const expected = hmac('sha256', secret, signed, 'hex');
    if (v1.some((given) => same(expected, given))) return OK;
  }
  return fail('bad-signature', 'no v1 signature of Stripe-Signature matches the body and the source’s secret');
}

/** Shopify: `X-Shopify-Hmac-Sha256: <base64 HMAC-SHA256 of the body>`, keyed with the app's client secret. */
function shopify(secrets: string[], headers: Headers, body: Buffer): Verdict {
  const given = headers['x-shopify-hmac-sha256'];
  if (!given) return fail('missing-header', 'X-Shopify-Hmac-Sha256 is missing');
  for (const secret of secrets) if (same(hmac('sha256', secret, body, 'base64'), given)) return OK;
  return fail('bad-signature', 'X-Shopify-Hmac-Sha256 does not match the body and the source’s secret');
}

/** Slack: `X-Slack-Signature: v0=<hex HMAC-SHA256 of v0:<timestamp>:<body>>`, `X-Slack-Request-Timestamp` within five minutes. */
function slack(secrets: string[], headers: Headers, body: Buffer, nowMs: number): Verdict {
  const signature = headers['x-slack-signature'];
  const timestamp = headers['x-slack-request-timestamp'];
  if (!signature || !timestamp) return fail('missing-header', `${!signature ? 'X-Slack-Signature' : 'X-Slack-Request-Timestamp'} is missing`);
  if (!signature.startsWith('v0=')) return fail('malformed-header', 'X-Slack-Signature is not v0=<hex>');
  if (!withinTolerance(timestamp, nowMs, PROVIDER_TOLERANCE_S)) return fail('timestamp-outside-tolerance', `X-Slack-Request-Timestamp ${timestamp} is more than ${PROVIDER_TOLERANCE_S} s from now`);
  const signed = Buffer.concat([Buffer.from(`v0:${timestamp}:`), body]);
  for (const secret of secrets) if (same(`v0=${hmac('sha256', secret, signed, 'hex')}`, signature)) return OK;
  return fail('bad-signature', 'X-Slack-Signature does not match the body and the source’s signing secret');
}

/** Standard Webhooks (Svix and others): `webhook-id`, `webhook-timestamp`, `webhook-signature`, checked by the spec's own library. */
function standard(secrets: string[], headers: Headers, body: Buffer): Verdict {
  const needed = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;
  const missing = needed.find((h) => !headers[h]);
  if (missing) return fail('missing-header', `${missing} is missing`);
  const given = Object.fromEntries(needed.map((h) => [h, headers[h]!]));
  let last = '';
  for (const secret of secrets) {
    try {
      new Webhook(secret).verify(body, given);
      return OK;
    } catch (err) {
      if (!(err instanceof WebhookVerificationError)) throw err;
      last = err.message;
    }
  }
  return /timestamp/i.test(last) ? fail('timestamp-outside-tolerance', `webhook-timestamp: ${last}`) : fail('bad-signature', `webhook-signature: ${last}`);
}

/** Any other sender: an HMAC of the body (or of `<timestamp>.<body>`) in a header, as configured. */
function generic(secrets: string[], settings: HmacSettings, headers: Headers, body: Buffer, nowMs: number): Verdict {
  const header = headers[settings.header.toLowerCase()];
  if (!header) return fail('missing-header', `${settings.header} is missing`);
  if (!header.startsWith(settings.signaturePrefix)) return fail('malformed-header', `${settings.header} does not start with ${settings.signaturePrefix}`);
  const given = header.slice(settings.signaturePrefix.length);
  let signed = body;
  if (settings.timestampHeader) {
    const timestamp = headers[settings.timestampHeader.toLowerCase()];
    if (!timestamp) return fail('missing-header', `${settings.timestampHeader} is missing`);
    if (!withinTolerance(timestamp, nowMs, settings.toleranceSeconds)) return fail('timestamp-outside-tolerance', `${settings.timestampHeader} ${timestamp} is more than ${settings.toleranceSeconds} s from now`);
    signed = Buffer.concat([Buffer.from(`${timestamp}.`), body]);
  }
  for (const secret of secrets) if (same(hmac(settings.algorithm, secret, signed, settings.encoding), given)) return OK;
  return fail('bad-signature', `${settings.header} does not match the body and the source’s secret`);
}

/** Checks a delivery's signature on its raw bytes, before anything is parsed. */
export async function verifyDelivery(source: WebhookSource, headers: Headers, body: Buffer, nowMs: number): Promise<Verdict> {
  const secrets = acceptedSecrets(source, nowMs);
  switch (source.type) {
    case 'github':
      return github(secrets, headers, body);
    case 'stripe':
      return stripe(secrets, headers, body, nowMs);
    case 'shopify':
      return shopify(secrets, headers, body);
    case 'slack':
      return slack(secrets, headers, body, nowMs);
    case 'standard-webhooks':
      return standard(secrets, headers, body);
    case 'hmac':
      return generic(secrets, source.hmac!, headers, body, nowMs);
  }
}
