import { createHash } from 'node:crypto';
import type { MappingRule, SourceMapping, WebhookSource } from '../../core/trackers/types';
import type { Headers } from './verify';

/** A verified delivery, parsed: a JSON body, or a form's fields (Slack slash commands, Twilio). */
export interface Delivery {
  headers: Headers;
  body: unknown;
}

/** The reserved fields a delivery gives its record; everything the body holds becomes its properties. */
export interface MappedFields {
  event: string;
  id?: string;
  uid?: string;
  sid?: string;
  /** Any text Date.parse reads, or Unix seconds. */
  eventAt?: string | number;
}

export type Mapped = { kind: 'record'; fields: MappedFields } | { kind: 'challenge'; challenge: string };

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
/** An id as text: a bigint (an integer beyond 2^53, e.g. a Shopify id) keeps its digits. */
const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : (typeof v === 'number' && Number.isFinite(v)) || typeof v === 'bigint' ? String(v) : undefined);
const at = (o: unknown, ...path: string[]): unknown => path.reduce<unknown>((v, k) => (isObject(v) ? v[k] : undefined), o);

/** RFC 6901: `/a/b~1c/0` reads a.["b/c"][0]; the empty pointer is the whole document. */
export function readPointer(doc: unknown, pointer: string): unknown {
  if (pointer === '') return doc;
  let value = doc;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(value)) value = /^(0|[1-9]\d*)$/.test(key) ? value[Number(key)] : undefined;
    else if (isObject(value)) value = Object.prototype.hasOwnProperty.call(value, key) ? value[key] : undefined;
    else return undefined;
  }
  return value;
}

function github(d: Delivery): MappedFields {
  const name = d.headers['x-github-event'] ?? 'unknown';
  const action = text(at(d.body, 'action'));
  return { event: `github.${name}${action ? `.${action}` : ''}`, id: d.headers['x-github-delivery'], uid: text(at(d.body, 'sender', 'login')) };
}

function stripe(d: Delivery): MappedFields {
  const object = at(d.body, 'data', 'object');
  const customer = at(object, 'object') === 'customer' ? at(object, 'id') : (text(at(object, 'customer')) ?? at(object, 'customer', 'id'));
  return { event: `stripe.${text(at(d.body, 'type')) ?? 'unknown'}`, id: text(at(d.body, 'id')), eventAt: typeof at(d.body, 'created') === 'number' ? (at(d.body, 'created') as number) : undefined, uid: text(customer) };
}

function shopify(d: Delivery): MappedFields {
  const customer = text(at(d.body, 'customer', 'id')) ?? (d.headers['x-shopify-topic']?.startsWith('customers/') ? text(at(d.body, 'id')) : undefined);
  return { event: `shopify.${d.headers['x-shopify-topic'] ?? 'unknown'}`, id: d.headers['x-shopify-webhook-id'] ?? d.headers['x-shopify-event-id'], eventAt: d.headers['x-shopify-triggered-at'], uid: customer };
}

function slack(d: Delivery): Mapped {
  const body = d.body;
  if (at(body, 'type') === 'url_verification') return { kind: 'challenge', challenge: text(at(body, 'challenge')) ?? '' };
  // Interactive components post a form whose `payload` field is JSON.
  const payload = at(body, 'payload');
  if (isObject(payload)) {
    return { kind: 'record', fields: { event: `slack.${text(at(payload, 'type')) ?? 'interaction'}`, id: text(at(payload, 'trigger_id')) ?? text(at(payload, 'action_ts')), uid: text(at(payload, 'user', 'id')) } };
  }
  const command = text(at(body, 'command'));
  if (command) return { kind: 'record', fields: { event: `slack.command.${command.replace(/^\//, '')}`, id: text(at(body, 'trigger_id')), uid: text(at(body, 'user_id')) } };
  return {
    kind: 'record',
    fields: { event: `slack.${text(at(body, 'event', 'type')) ?? text(at(body, 'type')) ?? 'unknown'}`, id: text(at(body, 'event_id')), eventAt: typeof at(body, 'event_time') === 'number' ? (at(body, 'event_time') as number) : undefined, uid: text(at(body, 'event', 'user')) },
  };
}

function standard(d: Delivery): MappedFields {
  return { event: text(at(d.body, 'type')) ?? 'webhook', id: d.headers['webhook-id'], eventAt: text(at(d.body, 'timestamp')) ?? (d.headers['webhook-timestamp'] ? Number(d.headers['webhook-timestamp']) : undefined) };
}

/** The preset of a source's type: the `_event`, `_id`, `_event_at` and `_uid` its deliveries get. */
function preset(source: WebhookSource, d: Delivery): Mapped {
  switch (source.type) {
    case 'github':
      return { kind: 'record', fields: github(d) };
    case 'stripe':
      return { kind: 'record', fields: stripe(d) };
    case 'shopify':
      return { kind: 'record', fields: shopify(d) };
    case 'slack':
      return slack(d);
    case 'standard-webhooks':
      return { kind: 'record', fields: standard(d) };
    case 'hmac':
      return { kind: 'record', fields: { event: 'webhook' } };
  }
}

function ruleValue(rule: MappingRule, d: Delivery): string | undefined {
  const raw = rule.header !== undefined ? d.headers[rule.header.toLowerCase()] : rule.pointer !== undefined ? readPointer(d.body, rule.pointer) : '';
  const value = typeof raw === 'string' ? raw : typeof raw === 'number' || typeof raw === 'bigint' || typeof raw === 'boolean' ? String(raw) : undefined;
  if (value === undefined) return undefined;
  const whole = `${rule.prefix}${value}`;
  return whole === '' ? undefined : whole;
}

/** The source's own mapping rules replace the preset's fields they name (a rule that finds nothing leaves the preset's value). */
function applyMapping(fields: MappedFields, mapping: SourceMapping, d: Delivery): MappedFields {
  const out = { ...fields };
  const set = (rule: MappingRule | undefined, apply: (v: string) => void) => {
    const v = rule && ruleValue(rule, d);
    if (v !== undefined) apply(v);
  };
  set(mapping._event, (v) => (out.event = v));
  set(mapping._id, (v) => (out.id = v));
  set(mapping._uid, (v) => (out.uid = v));
  set(mapping._sid, (v) => (out.sid = v));
  set(mapping._event_at, (v) => (out.eventAt = /^\d+(\.\d+)?$/.test(v) ? Number(v) : v));
  return out;
}

export function mapDelivery(source: WebhookSource, d: Delivery): Mapped {
  const mapped = preset(source, d);
  return mapped.kind === 'record' ? { kind: 'record', fields: applyMapping(mapped.fields, source.mapping, d) } : mapped;
}

/** A key that is not 1–128 printable ASCII characters is kept as the digest of its text, so a redelivery still matches it. */
export function deliveryKey(id: string, valid: (key: string) => boolean): string {
  return valid(id) ? id : `sha256:${createHash('sha256').update(id).digest('hex')}`;
}

/** Unix seconds or any date text, as ISO 8601 UTC; undefined when it is no date. */
export function eventTime(value: string | number | undefined): string | undefined {
  if (value === undefined) return undefined;
  const ms = typeof value === 'number' ? value * 1000 : Date.parse(value);
  return Number.isFinite(ms) && ms > -62135596800000 && ms < 253402300800000 ? new Date(ms).toISOString() : undefined;
}
