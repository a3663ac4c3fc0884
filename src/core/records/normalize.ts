import type { Limits } from '../config';
import { recordError, type RecordError } from '../errors';
import { parseEventTime } from './event-time';
import { CLIENT_RESERVED, nullProtoObject, type JsonValue, type Properties, type RecordKind, type RequestContext, type TrackedRecord } from './types';

export interface NormalizeInput {
  kind: RecordKind;
  /** One raw record: the URL parameters overlaid with the encoded payload; `_token` already removed. */
  raw: Record<string, unknown>;
  /** The id the record gets when the client gave no key: a fresh UUIDv7. */
  id: string;
  /** The key the request's `Idempotency-Key` header gives this record, if any; its own `_id` wins. */
  idempotencyKey?: string;
  /** The tracker's choice for lone surrogates: refuse the record (400), or store U+FFFD. Default reject. */
  invalidUnicode?: InvalidUnicode;
  receivedAt: string;
  timeZone: string;
  limits: Limits;
  context?: RequestContext;
  /**
   * An event's time that the caller has already read (ISO 8601 UTC, as `toISOString` writes it):
   * `_event_at` is then not looked for. Segment's `/v1` computes it from the message's times.
   */
  eventAt?: string | undefined;
}

/**
 * `keyed`: the record's `_id` is the client's key (from `_id` or `Idempotency-Key`), so it is
 * deduplicated. `bigInts`: a property holds a bigint at some depth, so the record must be queued
 * as exact JSON (jobs/routing/ingest-job.ts).
 */
export type NormalizeResult = { ok: true; record: TrackedRecord; keyed: boolean; bigInts: boolean } | { ok: false; error: RecordError };

/** A client key: 1 to 128 printable ASCII characters, no spaces. */
export const CLIENT_KEY_PATTERN = /^[\x21-\x7e]{1,128}$/;

const fail = (error: RecordError): NormalizeResult => ({ ok: false, error });

/**
 * `_uid` and `_sid`: strings, or JSON numbers stored as their decimal string. An integer beyond
 * 2^53 arrives as a bigint with its digits (exact-json.ts) and keeps them. A number that is not a
 * plain decimal (1e21) or is a rounded integer (`1e17`, parsed as a double) is refused rather than
 * stored as a different id.
 */
function readKey(value: unknown, field: string, limits: Limits, unicode: InvalidUnicode): string | RecordError {
  if (typeof value === 'bigint') {
    const text = value.toString();
    return text.length > limits.idLength ? recordError('ERR_VALUE_TOO_LONG', field, `${field} is longer than ${limits.idLength} characters.`) : text;
  }
  if (typeof value === 'number') {
    const text = String(value);
    if (!Number.isFinite(value) || (Number.isInteger(value) && !Number.isSafeInteger(value)) || text.includes('e')) {
      return recordError('ERR_INVALID_FIELD', field, `${field} is a number that cannot be kept exactly; send it as a string.`);
    }
    return text;
  }
  if (typeof value !== 'string') return recordError('ERR_INVALID_FIELD', field, `${field} must be a string or a number.`);
  if (value.length === 0) return recordError('ERR_INVALID_FIELD', field, `${field} must not be empty.`);
  if (value.length > limits.idLength) return recordError('ERR_VALUE_TOO_LONG', field, `${field} is longer than ${limits.idLength} characters.`);
  if (!value.isWellFormed()) return unicode === 'replace' ? value.toWellFormed() : surrogateError(field);
  return value;
}

/** What to do with text holding a lone UTF-16 surrogate (`"\ud800"`), which no destination accepts. */
export type InvalidUnicode = 'reject' | 'replace';

const surrogateError = (path: string): RecordError =>
  recordError('ERR_INVALID_UNICODE', path, `${path} holds a lone UTF-16 surrogate (e.g. "\\ud800"), which is not text; send valid Unicode, or set the tracker's invalidUnicode to replace.`);

/**
 * Set by `checkValue` when it meets a bigint, reset by `normalizeRecord` before its walk. A flag
 * rather than an object passed down the walk: the walk is synchronous, and an allocation and an
 * extra argument per record showed in bench:ingest's arrays.
 */
let sawBigInt = false;

/**
 * Walks a property value once, checking depth, key length, string length and that text is valid
 * Unicode. With `unicode: 'replace'` a lone surrogate becomes U+FFFD in place, in values and keys.
 * Returns the offending path, or undefined when the value is within limits.
 */
function checkValue(value: unknown, path: string, depth: number, limits: Limits, unicode: InvalidUnicode): RecordError | undefined {
  if (typeof value === 'string') {
    if (value.length > limits.valueLength) return recordError('ERR_VALUE_TOO_LONG', path, `${path} is longer than ${limits.valueLength} characters.`);
    return value.isWellFormed() || unicode === 'replace' ? undefined : surrogateError(path);
  }
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'bigint') sawBigInt = true;
    return undefined;
  }
  if (depth >= limits.depth) return recordError('ERR_TOO_DEEP', path, `${path} is nested deeper than ${limits.depth} levels.`);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const err = checkValue(item, `${path}[${i}]`, depth + 1, limits, unicode);
      if (err) return err;
      if (typeof item === 'string' && !item.isWellFormed()) value[i] = item.toWellFormed();
    }
    return undefined;
  }
  const obj = value as Record<string, unknown>;
  for (const key of Object.keys(obj)) {
    if (key.length > limits.keyLength) return recordError('ERR_KEY_TOO_LONG', `${path}.${key.slice(0, 64)}`, `A property name under ${path} is longer than ${limits.keyLength} characters.`);
    const item = obj[key];
    const err = checkValue(item, `${path}.${key}`, depth + 1, limits, unicode);
    if (err) return err;
    if (typeof item === 'string' && !item.isWellFormed()) obj[key] = item.toWellFormed();
    if (!key.isWellFormed()) {
      if (unicode === 'reject') return surrogateError(`${path}.${key.toWellFormed()}`);
      obj[key.toWellFormed()] = obj[key];
      delete obj[key];
    }
  }
  return undefined;
}

/** Text made valid Unicode at any depth (lone surrogates → U+FFFD), for bodies stored as sent (webhooks). */
export function wellFormed(value: unknown): unknown {
  if (typeof value === 'string') return value.isWellFormed() ? value : value.toWellFormed();
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = wellFormed(value[i]);
    return value;
  }
  const obj = value as Record<string, unknown>;
  for (const key of Object.keys(obj)) {
    const item = wellFormed(obj[key]);
    if (key.isWellFormed()) obj[key] = item;
    else {
      delete obj[key];
      obj[key.toWellFormed()] = item;
    }
  }
  return value;
}

/** Validates one raw record and turns it into the queued shape. Pure: no I/O, no clock. */
export function normalizeRecord(input: NormalizeInput): NormalizeResult {
  const { kind, raw, limits } = input;
  const unicode = input.invalidUnicode ?? 'reject';
  const allowed = CLIENT_RESERVED[kind];
  const properties = nullProtoObject<Properties>();
  const record: TrackedRecord = { kind, id: input.id, receivedAt: input.receivedAt, properties };
  let propertyCount = 0;
  sawBigInt = false;

  for (const key of Object.keys(raw)) {
    const value = raw[key];
    // One leading underscore marks Tributary's namespace. Two (`__typename` from GraphQL webhooks,
    // `__proto__`) are ordinary data: refusing them would bounce common payloads for no benefit.
    if (key.startsWith('_') && !key.startsWith('__')) {
      if (!allowed.has(key)) {
        return fail(recordError('ERR_RESERVED_FIELD', key, `${key} is reserved and not accepted on a ${kind}; rename the property without the leading underscore.`));
      }
      continue;
    }
    if (key.length > limits.keyLength) return fail(recordError('ERR_KEY_TOO_LONG', key.slice(0, 64), `A property name is longer than ${limits.keyLength} characters.`));
    if (++propertyCount > limits.propertiesPerRecord) return fail(recordError('ERR_TOO_MANY_PROPERTIES', undefined, `The record has more than ${limits.propertiesPerRecord} properties.`));
    const err = checkValue(value, key, 0, limits, unicode);
    if (err) return fail(err);
    let name = key;
    if (!key.isWellFormed()) {
      if (unicode === 'reject') return fail(surrogateError(key.toWellFormed()));
      name = key.toWellFormed();
    }
    properties[name] = (typeof value === 'string' && !value.isWellFormed() ? value.toWellFormed() : value) as JsonValue;
  }

  if (raw._uid !== undefined && raw._uid !== null) {
    const uid = readKey(raw._uid, '_uid', limits, unicode);
    if (typeof uid !== 'string') return fail(uid);
    record.uid = uid;
  } else if (kind === 'user') {
    return fail(recordError('ERR_MISSING_FIELD', '_uid', 'A user needs _uid.'));
  }

  if (kind !== 'user') {
    if (raw._sid !== undefined && raw._sid !== null) {
      const sid = readKey(raw._sid, '_sid', limits, unicode);
      if (typeof sid !== 'string') return fail(sid);
      record.sid = sid;
    } else if (kind === 'session') {
      return fail(recordError('ERR_MISSING_FIELD', '_sid', 'A session needs _sid.'));
    }
  }

  if (kind === 'event') {
    const name = raw._event;
    if (name === undefined) return fail(recordError('ERR_MISSING_FIELD', '_event', 'An event needs _event.'));
    if (typeof name !== 'string' || name.length === 0) return fail(recordError('ERR_INVALID_FIELD', '_event', '_event must be a non-empty string.'));
    if (name.length > limits.idLength) return fail(recordError('ERR_VALUE_TOO_LONG', '_event', `_event is longer than ${limits.idLength} characters.`));
    if (name.isWellFormed()) record.event = name;
    else if (unicode === 'reject') return fail(surrogateError('_event'));
    else record.event = name.toWellFormed();

    const at = raw._event_at;
    if (input.eventAt !== undefined) {
      record.eventAt = input.eventAt;
    } else if (at === undefined || at === null || at === '') {
      record.eventAt = input.receivedAt;
    } else {
      if (typeof at !== 'string') return fail(recordError('ERR_INVALID_FIELD', '_event_at', '_event_at must be a string such as 2026-11-22T14:03:00.'));
      const parsed = parseEventTime(at, input.timeZone);
      if (!parsed.ok) return fail(recordError('ERR_INVALID_FIELD', '_event_at', `_event_at ${JSON.stringify(at.slice(0, 40))}: ${parsed.reason}.`));
      record.eventAt = parsed.iso;
    }
  }

  let keyed = false;
  if (raw._id !== undefined && raw._id !== null) {
    if (typeof raw._id !== 'string' || !CLIENT_KEY_PATTERN.test(raw._id)) {
      return fail(recordError('ERR_INVALID_FIELD', '_id', '_id must be a string of 1 to 128 printable ASCII characters without spaces.'));
    }
    record.id = raw._id;
    keyed = true;
  } else if (input.idempotencyKey !== undefined) {
    record.id = input.idempotencyKey;
    keyed = true;
  }

  if (input.context) record.context = input.context;
  return { ok: true, record, keyed, bigInts: sawBigInt };
}
