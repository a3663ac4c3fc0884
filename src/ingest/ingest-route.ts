import type { IngestContext } from './ingest-context';
import { newRecordId } from '../core/records/record-id';
import type { Config } from '../core/config';
import { SecretsError } from '../core/secrets/keyring';
import { UnreadableTrackerError } from '../core/trackers/store';
import { ApiError, type RecordError } from '../core/errors';
import type { Metrics } from '../core/metrics';
import { dedupMember } from './dedup';
import { CLIENT_KEY_PATTERN, normalizeRecord } from '../core/records/normalize';
import { applyPrivacy, applyPrivacyToContext, privacyPlan } from '../core/records/privacy';
import { extractPayload, flatParams } from './payload';
import type { RecordKind, RequestContext, TrackedRecord } from '../core/records/types';
import type { IngestWriter } from './ingest-writer';
import type { RateLimiter } from './rate-limiter';
import type { TrackerResolver } from './resolver';
import type { Tracker } from '../core/trackers/types';

export interface IngestDeps {
  config: Readonly<Config>;
  resolver: TrackerResolver;
  writer: IngestWriter;
  rateLimiter: RateLimiter;
  metrics: Metrics;
}

/** `duplicate`: the record's key was accepted before, within the tracker's window; not queued again. */
type RecordResult = { id: string; duplicate?: true } | { error: RecordError };

/** What the route made of a request, for the renderer. */
export interface IngestOutcome {
  tracker: Tracker;
  /** Records queued by this request (duplicates excluded). */
  accepted: TrackedRecord[];
  /** Valid records whose key was accepted before: answered 2xx, not queued again. */
  duplicates: number;
  results: RecordResult[];
  /** The client sent an array: answer one result per record. */
  batch: boolean;
}

export function originAllowed(tracker: Tracker, origin: string | undefined): boolean {
  if (!origin) return true;
  return tracker.corsOrigins.includes('*') || tracker.corsOrigins.includes(origin);
}

/**
 * 503 when the trackers cannot be read. Redis's words are the client's to see (the connection);
 * a stored secret that does not open, or a stored tracker that is not valid, is the operator's business: its key id and key file stay in
 * the relay's own log (the keyring says which at every reload), not in an answer to a sender.
 */
export function trackersUnreadable(err: unknown, retryAfterSeconds: number): ApiError {
  const detail =
    err instanceof SecretsError
      ? 'a stored secret does not open with this process’s key file (the relay’s log says which)'
      : err instanceof UnreadableTrackerError
        ? 'this tracker’s stored settings are not valid (the relay’s log says why)'
        : (err as Error).message;
  const refusal = new ApiError('ERR_QUEUE_UNAVAILABLE', `Trackers cannot be read: ${detail}`, undefined, { 'Retry-After': String(retryAfterSeconds) });
  // The error handler logs the cause beside the refusal (src/http/error-handler.ts).
  return Object.assign(refusal, { cause: err });
}

/** The tracker a token names: 401 without one or for an unknown one, 503 when trackers cannot be read. */
export async function resolveTracker(deps: Pick<IngestDeps, 'resolver' | 'config'>, token: string | undefined): Promise<Tracker> {
  if (token === undefined) throw new ApiError('ERR_MISSING_TOKEN');
  let tracker: Tracker | undefined;
  try {
    tracker = await deps.resolver.resolve(token);
  } catch (err) {
    throw trackersUnreadable(err, deps.config.retryAfterSeconds);
  }
  if (!tracker) throw new ApiError('ERR_INVALID_TOKEN');
  return tracker;
}

let isoMs = 0;
let isoText = '';

/** The receive time. Formatting a Date costs more than the clock read, and at load most requests share their millisecond. */
export function receivedNow(): string {
  const ms = Date.now();
  if (ms !== isoMs) {
    isoMs = ms;
    isoText = new Date(ms).toISOString();
  }
  return isoText;
}

/** The sender's IP, user agent and referer, for a tracker that keeps them (`captureContext`). */
export function requestContext(ctx: IngestContext): RequestContext {
  const context: RequestContext = { ip: ctx.ip };
  const ua = ctx.get('user-agent');
  const referer = ctx.get('referer');
  if (ua) context.userAgent = ua;
  if (referer) context.referer = referer;
  return context;
}

/**
 * The `Idempotency-Key` header (IETF httpapi draft): the key of a single record, or the base of
 * `<key>:<i>` for record i of an array. Checked whole, so that no record gets an invalid key.
 */
function idempotencyKeys(header: string | undefined, count: number, batch: boolean): Array<string | undefined> | undefined {
  if (header === undefined || header === '') return undefined;
  const keys = batch ? Array.from({ length: count }, (_, i) => `${header}:${i}`) : [header];
  if (!CLIENT_KEY_PATTERN.test(header) || !keys.every((k) => CLIENT_KEY_PATTERN.test(k))) {
    const room = batch ? ` (with ":<index>" appended for each of the ${count} records)` : '';
    throw new ApiError('ERR_INVALID_FIELD', `The Idempotency-Key header must be 1 to 128 printable ASCII characters without spaces${room}.`, 'Idempotency-Key');
  }
  return keys;
}

/**
 * The v3 handler shared by every form: parse → authenticate → validate each record → apply the
 * tracker's personal-data rules → store in Redis → answer. Returns the outcome for the caller
 * that renders the response.
 */
export async function ingest(ctx: IngestContext, kind: RecordKind, deps: IngestDeps): Promise<IngestOutcome> {
  const { limits } = deps.config;
  const payload = extractPayload(
    { query: flatParams(new URLSearchParams(ctx.querystring)), body: ctx.state.body ?? { kind: 'none' }, authorization: ctx.get('authorization') || undefined },
    limits,
  );
  // The request history shows the start of a token that matched no tracker (src/http/history).
  ctx.state.presentedToken = payload.token;
  // A refusal of the whole request counts its records in the pictures over time (src/http/traffic).
  ctx.state.recordCount = payload.items.length;
  const tracker = await resolveTracker(deps, payload.token);
  ctx.state.trackerId = tracker.id;
  // One comparison for a tracker without personal-data rules; set before any refusal, so the live view redacts.
  const privacy = tracker.privacyRules.length > 0 ? privacyPlan(tracker) : undefined;
  if (privacy) ctx.state.privacy = privacy;
  if (!originAllowed(tracker, ctx.get('origin') || undefined)) throw new ApiError('ERR_ORIGIN_NOT_ALLOWED', `Origin ${ctx.get('origin')} is not allowed by this tracker.`);

  const receivedAt = receivedNow();
  const context = tracker.captureContext ? requestContext(ctx) : undefined;
  if (context && privacy) applyPrivacyToContext(context, privacy);
  const headerKeys = idempotencyKeys(ctx.get('idempotency-key') || undefined, payload.items.length, payload.batch);
  const dedupOn = tracker.dedupWindowHours > 0;
  const valid: TrackedRecord[] = [];
  /** The results of the valid records, in the order of `valid`. */
  const validResults: Array<{ id: string; duplicate?: true }> = [];
  let members: Array<Buffer | undefined> | undefined;
  let bigInts = false;
  const results: RecordResult[] = payload.items.map((item, i) => {
    if ('error' in item) return item;
    // A record keyed by the header never keeps a generated id: none is made for it.
    const outcome = normalizeRecord({ kind, raw: item.fields, id: headerKeys?.[i] ?? newRecordId(), idempotencyKey: headerKeys?.[i], invalidUnicode: tracker.invalidUnicode, receivedAt, timeZone: tracker.timeZone, limits, context });
    if (!outcome.ok) return { error: outcome.error };
    if (privacy) applyPrivacy(outcome.record, privacy);
    bigInts ||= outcome.bigInts;
    if (outcome.keyed && dedupOn) {
      members ??= valid.map(() => undefined);
      members.push(dedupMember(kind, outcome.record.id));
    } else members?.push(undefined);
    valid.push(outcome.record);
    const result = { id: outcome.record.id };
    validResults.push(result);
    return result;
  });
  let refusedCodes: string[] | undefined;
  for (const r of results) {
    if (!('error' in r)) continue;
    deps.metrics.recordsRejected.inc({ code: r.error.code });
    (refusedCodes ??= []).push(r.error.code);
  }
  if (refusedCodes) ctx.state.refusedCodes = refusedCodes;

  let accepted = valid;
  let duplicates = 0;
  if (valid.length > 0) {
    const wait = deps.rateLimiter.take(tracker.id, tracker.rateLimit, valid.length);
    if (wait > 0) throw new ApiError('ERR_RATE_LIMITED', undefined, undefined, { 'Retry-After': String(wait) });
    const seen = await deps.writer.write({ trackerId: tracker.id, partitions: tracker.partitions }, valid, members && { windowHours: tracker.dedupWindowHours, members }, bigInts);
    if (seen?.includes(true)) {
      seen.forEach((dup, i) => dup && (validResults[i]!.duplicate = true));
      accepted = valid.filter((_, i) => !seen[i]);
      duplicates = valid.length - accepted.length;
      deps.metrics.recordsDuplicate.inc({ tracker: tracker.id, kind }, duplicates);
    }
    // Stored: the live view (src/http/live) may show them.
    ctx.state.liveRecords = accepted;
    ctx.state.liveDuplicates = duplicates;
    deps.metrics.recordsAccepted.inc({ kind }, accepted.length);
  }
  return { tracker, accepted, duplicates, results, batch: payload.batch };
}
