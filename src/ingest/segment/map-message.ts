import { hash } from 'node:crypto';
import { recordError, type RecordError } from '../../core/errors';
import { stringifyExactJson } from '../../core/records/exact-json';
import { CLIENT_KEY_PATTERN } from '../../core/records/normalize';
import { nullProtoObject, type RecordKind } from '../../core/records/types';
import { contextColumns, sessionProperties } from './context-columns';
import { messageTime, segmentTimeMs } from './message-time';

/** The message types of Segment's spec, and the level each is stored at. */
export const SEGMENT_TYPES = { identify: 'user', track: 'event', page: 'event', screen: 'event', group: 'event', alias: 'event' } as const satisfies Record<string, RecordKind>;
export type SegmentType = keyof typeof SEGMENT_TYPES;

/** The event each non-track type is stored as (a track keeps its own `event`). */
const EVENT_NAMES: Readonly<Record<Exclude<SegmentType, 'identify' | 'track'>, string>> = { page: 'page_view', screen: 'screen_view', group: 'group', alias: 'alias' };

export const isSegmentType = (t: unknown): t is SegmentType => typeof t === 'string' && Object.hasOwn(SEGMENT_TYPES, t);

type Fields = Record<string, unknown>;
const isObject = (v: unknown): v is Fields => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What a request says of all its messages: the batch's root fields and the receive time. */
export interface SegmentEnvelope {
  receivedAt: string;
  receivedAtMs: number;
  /** The tracker's zone, for times without an offset. */
  timeZone: string;
  /** SEGMENT_CLOCK_SKEW_SECONDS in milliseconds. */
  skewMs: number;
  /** The batch's `sentAt` (read once: segmentTimeMs), `context` and `integrations`, which its messages inherit. */
  sentAtMs?: number;
  context?: Fields;
  integrations?: Fields;
  /** The type a single-call path (`/v1/track`, `/v1/t`) gives its message, whatever its body says. */
  type?: SegmentType;
}

/**
 * One message as v3 fields (`_id`, `_uid`, `_sid`, `_event` and properties) and its event's time
 * for `normalizeRecord`, and the session records its `_sid` implies. `keyed`: the `_id` is the
 * client's `messageId`, so a retry or redelivery is stored once.
 */
export type MappedMessage = { ok: true; kind: RecordKind; fields: Fields; keyed: boolean; eventAt?: string; sessions?: Fields[] } | { ok: false; error: RecordError };

const fail = (error: RecordError): MappedMessage => ({ ok: false, error });

/** A short, stable key for any text: what a `messageId` or session that cannot be an `_id` becomes. */
export function hashedKey(prefix: string, text: string): string {
  // Hashed as UTF-8, where every lone surrogate is U+FFFD: such text is hashed as its JSON escapes, so two never meet.
  return `${prefix}${hash('sha256', text.isWellFormed() ? text : JSON.stringify(text), 'hex').slice(0, 32)}`;
}

/** `messageId` as `_id`: kept when it fits `_id`'s rules, else hashed, so it still deduplicates. */
function messageKey(messageId: unknown): string | undefined {
  if (messageId === undefined || messageId === null || messageId === '') return undefined;
  const text = typeof messageId === 'string' ? messageId : stringifyExactJson(messageId);
  return CLIENT_KEY_PATTERN.test(text) ? text : hashedKey('seg-', text);
}

/** An id as SDKs send them: non-empty text, or a number (analytics-python turns them into text); one past 2^53 keeps its digits. */
function idOf(value: unknown): string | number | undefined {
  if (typeof value === 'string') return value.length > 0 ? value : undefined;
  if (typeof value === 'bigint') return value.toString();
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/**
 * Copies traits or properties into a record's fields. A name with one leading underscore would
 * be refused as reserved (`_id`, `_uid`…): it gets a second one, which v3 keeps as ordinary data
 * (`_internal` → `__internal`).
 */
function copyData(from: Fields, into: Fields): void {
  for (const key of Object.keys(from)) into[key.charCodeAt(0) === 95 && key.charCodeAt(1) !== 95 ? `_${key}` : key] = from[key];
}

/**
 * The session a message belongs to: RudderStack's `context.sessionId`, else the session plugin of
 * Segment's Amplitude destination (`integrations["Actions Amplitude"].session_id`). Both are the
 * session's start in epoch milliseconds, unique per device only, so the `_sid` is
 * `<anonymousId or userId>:<id>`.
 */
function sessionOf(context: Fields, integrations: Fields | undefined, who: string | number): string | undefined {
  const amplitude = integrations?.['Actions Amplitude'];
  const hint = context.sessionId ?? (isObject(amplitude) ? amplitude.session_id : undefined);
  if (typeof hint === 'number' ? hint > 0 && Number.isFinite(hint) : typeof hint === 'string' && hint.length > 0) return `${who}:${hint}`;
  return undefined;
}

/** `properties` or `traits` when the message has an object there; absent and null are none. */
const dataOf = (message: Fields, name: 'properties' | 'traits'): Fields | undefined => (isObject(message[name]) ? message[name] : undefined);

function badData(message: Fields): RecordError | undefined {
  for (const name of ['properties', 'traits'] as const) {
    const value = message[name];
    if (value !== undefined && value !== null && !isObject(value)) return recordError('ERR_INVALID_FIELD', name, `${name} must be a JSON object.`);
  }
  return undefined;
}

/**
 * The session records a message with a `_sid` implies, each keyed so that it is stored once per
 * deduplication window (see segment-route.ts): the session's start, with how the visitor arrived
 * (from the context of the first message seen), and, once the visitor is known, the session given
 * to the user, as the browser SDK does on identify. Upserts merge, so the second one changes
 * `_uid` and leaves the landing page alone.
 */
function sessionRecords(sid: string, context: Fields, userId: string | number | undefined, anonymousId: string | number | undefined): Fields[] {
  const start = nullProtoObject<Fields>();
  start._id = hashedKey('seg-session-', sid);
  start._sid = sid;
  start._uid = userId ?? anonymousId;
  sessionProperties(context, start);
  if (userId === undefined || anonymousId === undefined) return [start];
  const known = nullProtoObject<Fields>();
  known._id = hashedKey('seg-session-user-', `${sid}\n${userId}`);
  known._sid = sid;
  known._uid = userId;
  return [start, known];
}

/** Maps one Segment message onto Tributary's levels. Pure: the clock comes in the envelope. */
export function mapSegmentMessage(message: Fields, envelope: SegmentEnvelope): MappedMessage {
  const type = envelope.type ?? message.type;
  if (!isSegmentType(type)) {
    return fail(recordError('ERR_INVALID_FIELD', 'type', `type must be one of ${Object.keys(SEGMENT_TYPES).join(', ')}.`));
  }
  const userId = idOf(message.userId);
  const anonymousId = idOf(message.anonymousId);
  const who = userId ?? anonymousId;
  if (who === undefined) return fail(recordError('ERR_MISSING_FIELD', 'userId', 'A message needs userId or anonymousId.'));
  const bad = badData(message);
  if (bad) return fail(bad);
  const ownContext = isObject(message.context) ? message.context : undefined;
  const context = envelope.context ? { ...envelope.context, ...ownContext } : (ownContext ?? {});
  const integrations = isObject(message.integrations) ? (envelope.integrations ? { ...envelope.integrations, ...message.integrations } : message.integrations) : envelope.integrations;

  const fields = nullProtoObject<Fields>();
  const id = messageKey(message.messageId);
  if (id !== undefined) fields._id = id;
  fields._uid = who;
  if (userId !== undefined && anonymousId !== undefined) fields.anonymous_id = anonymousId;

  if (type === 'identify') {
    const traits = dataOf(message, 'traits');
    if (isObject(context.traits)) copyData(context.traits, fields);
    if (traits) copyData(traits, fields);
    return { ok: true, kind: 'user', fields, keyed: id !== undefined };
  }

  const sid = sessionOf(context, integrations, anonymousId ?? who);
  if (sid !== undefined) fields._sid = sid;
  if (type === 'track') {
    if (typeof message.event !== 'string' || message.event.length === 0) return fail(recordError('ERR_MISSING_FIELD', 'event', 'A track message needs event, a non-empty string.'));
    fields._event = message.event;
  } else fields._event = EVENT_NAMES[type];
  const sentMs = message.sentAt === undefined || message.sentAt === null ? envelope.sentAtMs : segmentTimeMs(message.sentAt, envelope.timeZone);
  const time = messageTime(message.originalTimestamp ?? message.timestamp, sentMs, envelope.receivedAtMs, envelope.receivedAt, envelope.timeZone, envelope.skewMs);
  if (time.original !== undefined) fields.original_timestamp = time.original;
  contextColumns(context, fields);

  if (type === 'page' || type === 'screen') {
    if (message.name !== undefined && message.name !== null) fields.name = message.name;
    if (message.category !== undefined && message.category !== null) fields.category = message.category;
  } else if (type === 'group') {
    if (message.groupId !== undefined) fields.group_id = message.groupId;
    const traits = dataOf(message, 'traits');
    if (traits) fields.group_traits = traits;
  } else if (type === 'alias' && message.previousId !== undefined) {
    fields.previous_id = message.previousId;
  }
  const properties = dataOf(message, 'properties');
  if (properties) copyData(properties, fields);

  const mapped: MappedMessage = { ok: true, kind: 'event', fields, keyed: id !== undefined, eventAt: time.eventAt };
  if (sid !== undefined) mapped.sessions = sessionRecords(sid, context, userId, anonymousId);
  return mapped;
}
