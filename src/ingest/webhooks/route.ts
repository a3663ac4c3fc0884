import Router from '@koa/router';
import type { HttpContext } from '../../core/requests/request-state';
import { newRecordId } from '../../core/records/record-id';
import { ApiError } from '../../core/errors';
import { trackersUnreadable, type IngestDeps } from '../ingest-route';
import { readBodyBytes, parseBodyText } from '../read-body';
import { dedupMember } from '../dedup';
import { CLIENT_KEY_PATTERN, wellFormed } from '../../core/records/normalize';
import { applyPrivacy, privacyPlan } from '../../core/records/privacy';
import { holdsBigInt, parseExactJson } from '../../core/records/exact-json';
import { nullProtoObject, type JsonValue, type Properties, type TrackedRecord } from '../../core/records/types';
import type { SourceDelivery, SourceDeliveryLog } from '../../core/trackers/source-deliveries';
import type { Tracker, WebhookSource } from '../../core/trackers/types';
import { deliveryKey, eventTime, mapDelivery, type Delivery } from './presets';
import { verifyDelivery, type Headers, type SignatureFailure } from './verify';
import { WEBHOOK_PATH } from './webhook-url';

export interface WebhookDeps extends IngestDeps {
  /** Where each delivery's verdict is kept for the console; none: not kept. */
  deliveryLog?: SourceDeliveryLog;
}

/** A refused signature, carrying its reason for the source's delivery log. */
class WebhookSignatureError extends ApiError {
  constructor(
    readonly reason: SignatureFailure,
    message: string,
  ) {
    super('ERR_WEBHOOK_SIGNATURE', `${reason}: ${message}.`);
  }
}

function headersOf(ctx: HttpContext): Headers {
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(ctx.headers)) out[name] = Array.isArray(value) ? value.join(', ') : value;
  return out;
}

/**
 * The body as the record's properties, whole: every key (leading underscores, dots, `__proto__`)
 * is data here, as the sender wrote it. A form's `payload` field holding JSON (Slack's
 * interactive components) is parsed in place; a body that is not an object is kept under `payload`.
 */
function bodyOf(raw: Buffer, isForm: boolean): unknown {
  const parsed = parseBodyText(raw, isForm);
  if (parsed.kind === 'none') return nullProtoObject<Properties>();
  if (parsed.kind === 'json') return parsed.value;
  const form: Record<string, unknown> = parsed.value;
  const payload = form.payload;
  if (typeof payload === 'string' && /^\s*[{[]/.test(payload)) {
    try {
      form.payload = parseExactJson(payload);
    } catch {
      // Not JSON after all: kept as the text it is.
    }
  }
  return form;
}

function propertiesOf(body: unknown): Properties {
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) return body as Properties;
  const wrapped = nullProtoObject<Properties>();
  wrapped.payload = body as JsonValue;
  return wrapped;
}

async function findSource(deps: IngestDeps, trackerId: string, sourceId: string): Promise<{ tracker: Tracker; source: WebhookSource }> {
  let tracker: Tracker | undefined;
  try {
    tracker = await deps.resolver.byId(trackerId);
  } catch (err) {
    throw trackersUnreadable(err, deps.config.retryAfterSeconds);
  }
  const source = tracker?.sources.find((s) => s.id === sourceId);
  if (!tracker || !source) throw new ApiError('ERR_WEBHOOK_NOT_FOUND');
  return { tracker, source };
}

/** What the sender was answered when the delivery was refused after its source was found. */
function refusal(err: unknown): SourceDelivery {
  const at = new Date().toISOString();
  if (err instanceof WebhookSignatureError) return { at, verdict: 'refused', status: err.status, reason: err.reason, message: err.message };
  if (err instanceof ApiError) return { at, verdict: 'refused', status: err.status, reason: err.code, message: err.message };
  return { at, verdict: 'refused', status: 500, reason: 'ERR_INTERNAL' };
}

/**
 * Verify the signature on the raw bytes, answer a handshake, map the delivery to one event by the
 * source's preset and mapping, and store it, deduplicated on the sender's delivery id.
 */
async function receive(deps: IngestDeps, ctx: HttpContext, tracker: Tracker, source: WebhookSource): Promise<SourceDelivery> {
  const { raw, isForm } = await readBodyBytes(ctx, deps.config.limits);
  const headers = headersOf(ctx);
  const verdict = await verifyDelivery(source, headers, raw, Date.now());
  if (!verdict.ok) throw new WebhookSignatureError(verdict.reason, verdict.message);

  // A signed delivery is never refused for its text: a lone surrogate becomes U+FFFD.
  const delivery: Delivery = { headers, body: wellFormed(bodyOf(raw, isForm)) };
  const mapped = mapDelivery(source, delivery);
  if (mapped.kind === 'challenge') {
    ctx.status = 200;
    ctx.body = { challenge: mapped.challenge };
    return { at: new Date().toISOString(), verdict: 'challenge', status: 200 };
  }
  const { limits } = deps.config;
  const receivedAt = new Date().toISOString();
  const { fields } = mapped;
  const record: TrackedRecord = {
    kind: 'event',
    id: fields.id ? deliveryKey(fields.id, (k) => CLIENT_KEY_PATTERN.test(k)) : newRecordId(),
    receivedAt,
    event: fields.event.slice(0, limits.idLength),
    eventAt: eventTime(fields.eventAt) ?? receivedAt,
    properties: propertiesOf(delivery.body),
  };
  if (fields.uid) record.uid = fields.uid.slice(0, limits.idLength);
  if (fields.sid) record.sid = fields.sid.slice(0, limits.idLength);
  if (tracker.privacyRules.length > 0) applyPrivacy(record, privacyPlan(tracker));
  const keyed = fields.id !== undefined && tracker.dedupWindowHours > 0;
  const wait = deps.rateLimiter.take(tracker.id, tracker.rateLimit, 1);
  if (wait > 0) throw new ApiError('ERR_RATE_LIMITED', undefined, undefined, { 'Retry-After': String(wait) });
  const seen = await deps.writer.write({ trackerId: tracker.id, partitions: tracker.partitions }, [record], keyed ? { windowHours: tracker.dedupWindowHours, members: [dedupMember('event', record.id)] } : undefined, holdsBigInt(record.properties));
  const duplicate = seen?.[0] === true;
  if (duplicate) deps.metrics.recordsDuplicate.inc({ tracker: tracker.id, kind: 'event' });
  else deps.metrics.recordsAccepted.inc({ kind: 'event' });
  ctx.state.liveRecords = duplicate ? [] : [record];
  ctx.state.liveDuplicates = duplicate ? 1 : 0;
  ctx.status = 200;
  ctx.body = duplicate ? { accepted: 0, duplicate: true, id: record.id, event: record.event } : { accepted: 1, id: record.id, event: record.event };
  return { at: new Date().toISOString(), verdict: duplicate ? 'duplicate' : 'accepted', status: 200, event: record.event, id: record.id };
}

/**
 * `POST /v3/webhooks/<tracker>/<source>`: answers 200, which every sender takes as delivered, or
 * refuses with the reason. Each delivery's verdict goes to the source's log, without being waited for.
 */
export function createWebhookRouter(deps: WebhookDeps): Router {
  const router = new Router();
  router.post(WEBHOOK_PATH, async (ctx) => {
    const { tracker, source } = await findSource(deps, ctx.params.tracker!, ctx.params.source!);
    ctx.state.trackerId = tracker.id;
    if (tracker.privacyRules.length > 0) ctx.state.privacy = privacyPlan(tracker);
    let outcome: SourceDelivery;
    try {
      outcome = await receive(deps, ctx, tracker, source);
    } catch (err) {
      deps.deliveryLog?.record(tracker.id, source.id, refusal(err));
      throw err;
    }
    deps.deliveryLog?.record(tracker.id, source.id, outcome);
  });
  return router;
}
