import type { Context, Middleware } from 'koa';
import { redactingReplacer, REDACTED } from '../core/redact';
import { stringifyExactJson } from '../core/records/exact-json';

/** Webhook signing secrets: shown in the answer that made them, masked in every other. */
const ONCE_SECRETS = new Set(['secret', 'previousSecret']);

interface RedactionState {
  revealSecrets?: boolean;
}

/** The answer of this request may show the webhook secret it just made (adding or rotating a source). */
export function revealSecretsOnce(ctx: Context): void {
  (ctx.state as RedactionState).revealSecrets = true;
}

function isStream(body: unknown): boolean {
  return typeof (body as { pipe?: unknown }).pipe === 'function';
}

/** Every admin answer passes here, so no route can forget to hide a secret. */
export const redactAnswers: Middleware = async (ctx, next) => {
  await next();
  ctx.set('Cache-Control', 'no-store');
  if (typeof ctx.body === 'object' && ctx.body !== null && !Buffer.isBuffer(ctx.body) && !isStream(ctx.body)) {
    const reveal = (ctx.state as RedactionState).revealSecrets === true;
    // As text, so that a record's integer beyond 2^53 (a dead letter's) reaches the client with its digits.
    ctx.body = stringifyExactJson(ctx.body, (key, value) => (!reveal && ONCE_SECRETS.has(key) && typeof value === 'string' ? REDACTED : redactingReplacer(key, value)));
    ctx.type = 'application/json';
  }
};
