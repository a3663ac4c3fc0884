import { newRecordId } from '../../core/records/record-id';
import { ApiError, recordError, type RecordError } from '../../core/errors';
import { stringifyExactJson } from '../../core/records/exact-json';
import { normalizeRecord } from '../../core/records/normalize';
import { applyPrivacy, applyPrivacyToContext, privacyPlan } from '../../core/records/privacy';
import { nullProtoObject, type RecordKind, type TrackedRecord } from '../../core/records/types';
import type { Tracker } from '../../core/trackers/types';
import { dedupMember } from '../dedup';
import type { IngestContext } from '../ingest-context';
import { originAllowed, receivedNow, requestContext, resolveTracker, type IngestDeps } from '../ingest-route';
import { SEGMENT_LIMITS } from './limits';
import { batchMessageSizes } from './message-sizes';
import { mapSegmentMessage, type SegmentEnvelope, type SegmentType } from './map-message';
import { segmentTimeMs } from './message-time';
import { messageKeyConflict, segmentWriteKey } from './write-key';

type Fields = Record<string, unknown>;
const isObject = (v: unknown): v is Fields => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A message that was not stored, as the answer reports it. */
export interface RejectedMessage {
  index: number;
  messageId?: string;
  code: string;
  message: string;
  field?: string;
}

/** What a `/v1` request came to, for the renderer. */
export interface SegmentOutcome {
  tracker: Tracker;
  /** Messages stored by this request (repeats excluded). */
  accepted: number;
  /** Messages whose `messageId` was stored before, within the tracker's window: answered, not stored again. */
  duplicates: number;
  rejected: RejectedMessage[];
  /** The `_id` of each stored or repeated message, in message order (undefined for a rejected one). */
  ids: Array<string | undefined>;
}

/**
 * How long a session's marker lasts when the tracker deduplicates nothing (window 0): its
 * session record is still written once, not with every message.
 */
const SESSION_WINDOW_HOURS = 24;

/** The request's messages: the body itself on a single-call path, else its `batch`. */
function messagesOf(body: unknown, single: boolean): { root: Fields; messages: unknown[] } {
  if (!isObject(body)) throw new ApiError('ERR_INVALID_PAYLOAD', single ? 'The body must be one JSON object: a Segment message.' : 'The body must be a JSON object: {"batch": [messages…]}.');
  if (single) return { root: nullProtoObject<Fields>(), messages: [body] };
  const batch = body.batch;
  if (!Array.isArray(batch)) throw new ApiError('ERR_INVALID_PAYLOAD', 'batch must be an array of messages: {"batch": [{"type": "track", …}]}.', 'batch');
  if (batch.length === 0) throw new ApiError('ERR_EMPTY_BATCH', 'batch holds no messages.', 'batch');
  if (batch.length > SEGMENT_LIMITS.batchMessages) throw new ApiError('ERR_TOO_MANY_RECORDS', `A batch holds at most ${SEGMENT_LIMITS.batchMessages} messages, as at Segment.`, 'batch');
  return { root: body, messages: batch };
}

function countByKind(records: readonly TrackedRecord[]): Map<RecordKind, number> {
  const counts = new Map<RecordKind, number>();
  for (const r of records) counts.set(r.kind, (counts.get(r.kind) ?? 0) + 1);
  return counts;
}

const idText = (v: unknown): string | undefined => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined);

/** A request's messages as records, ready to store: nothing of the parsed body is kept. */
export interface MappedRequest {
  tracker: Tracker;
  records: TrackedRecord[];
  /** Per record, its deduplication marker, or undefined (see DedupRequest). */
  members: Array<Buffer | undefined>;
  /** Per record, the message it stores, or -1 for a session record. */
  messageOf: number[];
  bigInts: boolean;
  rejected: RejectedMessage[];
  ids: Array<string | undefined>;
}

/**
 * The first step of every `/v1` path: authenticate by write key, map each message onto a user or
 * an event (and the session it names), validate it as v3 validates and apply the tracker's
 * personal-data rules. A bad message is reported and never fails the others. The parsed body is
 * given here and kept by nothing returned, so that it can be collected while the records are
 * written (storeSegment): a batch's parsed messages are three to four objects each.
 */
export async function mapSegmentRequest(ctx: IngestContext, input: { body: unknown; raw: Buffer }, deps: IngestDeps, single?: SegmentType): Promise<MappedRequest> {
  const { body, raw } = input;
  const { limits } = deps.config;
  const { root, messages } = messagesOf(body, single !== undefined);
  ctx.state.recordCount = messages.length;
  const key = segmentWriteKey(ctx.get('authorization') || undefined, root, messages[0]);
  ctx.state.presentedToken = key;
  // v3's word for a missing token names v3's ways to send one; an SDK's user looks for the write key.
  if (key === undefined) throw new ApiError('ERR_MISSING_TOKEN', 'No write key: send Authorization: Basic base64("<writeKey>:"), or writeKey in the body. The write key is a tracker token.');
  const tracker = await resolveTracker(deps, key);
  ctx.state.trackerId = tracker.id;
  const privacy = tracker.privacyRules.length > 0 ? privacyPlan(tracker) : undefined;
  if (privacy) ctx.state.privacy = privacy;
  if (!originAllowed(tracker, ctx.get('origin') || undefined)) throw new ApiError('ERR_ORIGIN_NOT_ALLOWED', `Origin ${ctx.get('origin')} is not allowed by this tracker.`);

  const receivedAt = receivedNow();
  const envelope: SegmentEnvelope = { receivedAt, receivedAtMs: Date.parse(receivedAt), timeZone: tracker.timeZone, skewMs: deps.config.segmentClockSkewMs };
  const sentAtMs = segmentTimeMs(root.sentAt, tracker.timeZone);
  if (sentAtMs !== undefined) envelope.sentAtMs = sentAtMs;
  if (isObject(root.context)) envelope.context = root.context;
  if (isObject(root.integrations)) envelope.integrations = root.integrations;
  if (single) envelope.type = single;
  const context = tracker.captureContext ? requestContext(ctx) : undefined;
  if (context && privacy) applyPrivacyToContext(context, privacy);
  // A body within one message's limit holds no message past it: only larger ones are measured,
  // each as it was sent, else (a batch spelled so the byte pass cannot find it) as JSON again.
  const measure = raw.length > SEGMENT_LIMITS.messageBytes;
  const found = measure ? batchMessageSizes(raw) : undefined;
  const sizes = found?.length === messages.length ? found : undefined;
  const sizeOf = (message: unknown, i: number) => sizes?.[i] ?? Buffer.byteLength(stringifyExactJson(message));
  const dedupOn = tracker.dedupWindowHours > 0;

  const records: TrackedRecord[] = [];
  const members: Array<Buffer | undefined> = [];
  /** Per record, the message it stores, or -1 for a session record. */
  const messageOf: number[] = [];
  let bigInts = false;
  const rejected: RejectedMessage[] = [];
  const ids: Array<string | undefined> = new Array<string | undefined>(messages.length);
  const refuse = (index: number, message: unknown, error: RecordError) => {
    const entry: RejectedMessage = { index, code: error.code, message: error.message };
    const messageId = isObject(message) ? idText(message.messageId) : undefined;
    if (messageId !== undefined) entry.messageId = messageId;
    if (error.field !== undefined) entry.field = error.field;
    rejected.push(entry);
  };
  /** Validates and keeps a record; its `_id`, or why it is refused. */
  const add = (kind: RecordKind, fields: Fields, keyed: boolean, index: number, eventAt?: string): string | RecordError => {
    // A message with its messageId keeps it as `_id`: no id is made for it.
    const outcome = normalizeRecord({ kind, raw: fields, id: typeof fields._id === 'string' ? fields._id : newRecordId(), invalidUnicode: tracker.invalidUnicode, receivedAt, timeZone: tracker.timeZone, limits, context, eventAt });
    if (!outcome.ok) return outcome.error;
    if (privacy) applyPrivacy(outcome.record, privacy);
    bigInts ||= outcome.bigInts;
    records.push(outcome.record);
    members.push(keyed && (dedupOn || index < 0) ? dedupMember(kind, outcome.record.id) : undefined);
    messageOf.push(index);
    return outcome.record.id;
  };

  const take = (message: unknown, i: number): void => {
    if (!isObject(message)) return refuse(i, message, recordError('ERR_INVALID_PAYLOAD', undefined, 'Each message must be a JSON object.'));
    if (key !== undefined && messageKeyConflict(message, key)) return refuse(i, message, recordError('ERR_TOKEN_CONFLICT', 'writeKey', 'The message carries another writeKey than the request.'));
    if (measure && sizeOf(message, i) > SEGMENT_LIMITS.messageBytes) {
      return refuse(i, message, recordError('ERR_PAYLOAD_TOO_LARGE', undefined, `A message is at most ${SEGMENT_LIMITS.messageBytes} bytes of JSON, as at Segment.`));
    }
    const mapped = mapSegmentMessage(message, envelope);
    if (!mapped.ok) return refuse(i, message, mapped.error);
    const id = add(mapped.kind, mapped.fields, mapped.keyed, i, mapped.eventAt);
    if (typeof id !== 'string') return refuse(i, message, id);
    ids[i] = id;
    // A session record that does not validate leaves its message stored: it is a by-product.
    for (const session of mapped.sessions ?? []) add('session', session, true, -1);
  };
  messages.forEach((message, i) => {
    try {
      take(message, i);
    } catch (err) {
      // JSON.stringify of a value nested deeper than the stack (a messageId, a timestamp, the size check).
      if (!(err instanceof RangeError)) throw err;
      refuse(i, message, recordError('ERR_TOO_DEEP', undefined, 'The message is nested too deeply to be read.'));
    }
  });
  if (rejected.length > 0) {
    for (const r of rejected) deps.metrics.recordsRejected.inc({ code: r.code });
    ctx.state.refusedCodes = rejected.map((r) => r.code);
  }

  return { tracker, records, members, messageOf, bigInts, rejected, ids };
}

/** The second step: the mapped records in one write, then what the answer says of each message. */
export async function storeSegment(ctx: IngestContext, deps: IngestDeps, request: MappedRequest): Promise<SegmentOutcome> {
  const { tracker, records, members, messageOf, bigInts, rejected, ids } = request;
  const dedupOn = tracker.dedupWindowHours > 0;
  let accepted = records;
  let duplicates = 0;
  if (records.length > 0) {
    const wait = deps.rateLimiter.take(tracker.id, tracker.rateLimit, records.length);
    if (wait > 0) throw new ApiError('ERR_RATE_LIMITED', undefined, undefined, { 'Retry-After': String(wait) });
    const keyed = members.some((m) => m !== undefined);
    const windowHours = dedupOn ? tracker.dedupWindowHours : SESSION_WINDOW_HOURS;
    const seen = await deps.writer.write({ trackerId: tracker.id, partitions: tracker.partitions }, records, keyed ? { windowHours, members } : undefined, bigInts);
    if (seen?.includes(true)) {
      accepted = records.filter((_, i) => !seen[i]);
      // A session's record is a repeat from its session's second message on: not the client's repeat.
      const repeats = records.filter((_, i) => seen[i] && messageOf[i]! >= 0);
      duplicates = repeats.length;
      for (const [kind, n] of countByKind(repeats)) deps.metrics.recordsDuplicate.inc({ tracker: tracker.id, kind }, n);
    }
    ctx.state.liveRecords = accepted;
    ctx.state.liveDuplicates = duplicates;
    for (const [kind, n] of countByKind(accepted)) deps.metrics.recordsAccepted.inc({ kind }, n);
  }
  const stored = messageOf.filter((m) => m >= 0).length;
  return { tracker, accepted: stored - duplicates, duplicates, rejected, ids };
}
