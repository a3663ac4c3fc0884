import { createHmac } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import { ruleTarget, type PrivacyAction, type RuleTarget } from '../trackers/privacy-rules';
import type { Tracker } from '../trackers/types';
import { stringifyExactJson } from './exact-json';
import type { JsonValue, RequestContext, TrackedRecord } from './types';

interface CompiledRule {
  target: RuleTarget;
  action: PrivacyAction;
}

/** A tracker's rules, ready to apply; built once per tracker object (the resolver caches those). */
export interface PrivacyPlan {
  rules: readonly CompiledRule[];
  secret: string;
  /** Top-level names the rules touch: the URL parameters the live view must not show. `*`: all. */
  topLevel: ReadonlySet<string>;
}

const DROP = Symbol('drop');
type Outcome = JsonValue | typeof DROP;

const plans = new WeakMap<Tracker, PrivacyPlan>();

/**
 * The plan of a tracker that has rules. Callers check `tracker.privacyRules.length > 0` first, so
 * a tracker without rules costs that one comparison per request.
 */
export function privacyPlan(tracker: Tracker): PrivacyPlan {
  let plan = plans.get(tracker);
  if (plan) return plan;
  const rules: CompiledRule[] = [];
  const topLevel = new Set<string>();
  for (const rule of tracker.privacyRules) {
    const target = ruleTarget(rule);
    // The schema refused invalid rules when the tracker was saved.
    if (typeof target === 'string') continue;
    rules.push({ target, action: rule.action });
    if (target.kind === 'property') topLevel.add(target.path[0]!);
    else topLevel.add(`_${target.kind}`);
  }
  // TrackerStore gives every tracker with a `hash` rule a secret; hashing under an empty key would be guessable.
  if (tracker.privacySecret === undefined && rules.some((r) => r.action === 'hash')) throw new Error(`Tracker ${tracker.id} has hash rules but no privacySecret: save it through TrackerStore.`);
  plan = { rules, secret: tracker.privacySecret ?? '', topLevel };
  plans.set(tracker, plan);
  return plan;
}

/** Whether a URL parameter of this name may carry a value a rule changes (and so must not be shown raw). */
export function isPrivateParam(plan: PrivacyPlan, name: string): boolean {
  return name === 'data' || plan.topLevel.has('*') || plan.topLevel.has(name);
}

/**
 * HMAC-SHA256 of the value's text (a string as is, anything else as its JSON), lowercase hex. An
 * integer beyond 2^53 (a bigint, which JSON.stringify refuses) is its digits, so it hashes as the
 * same id sent as a string does.
 */
export function hashValue(value: JsonValue, secret: string): JsonValue {
  if (value === null) return null;
  return createHmac('sha256', secret)
    .update(typeof value === 'string' ? value : stringifyExactJson(value))
    .digest('hex');
}

const truncateIpv4 = (ip: string): string => ip.replace(/\.\d+$/, '.0');

/**
 * IPv4 `a.b.c.d` → `a.b.c.0` (a /24); IPv6 → its first 48 bits, as Google Analytics' IP
 * anonymization does (the rest names a site's subnets and hosts); IPv4-mapped IPv6
 * (`::ffff:a.b.c.d`, how a dual-stack server sees IPv4 clients) as IPv4. A zone (`%eth0`) is dropped.
 */
export function truncateIp(text: string): string | undefined {
  const ip = text.trim();
  if (isIPv4(ip)) return truncateIpv4(ip);
  const bare = ip.replace(/%.*$/, '');
  if (!isIPv6(bare)) return undefined;
  const groups = expandIpv6(bare);
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const [hi = 0, lo = 0] = groups.slice(6);
    return `::ffff:${truncateIpv4(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`)}`;
  }
  const head = groups.slice(0, 3);
  // Trailing zero groups fold into the `::` (RFC 5952): 2001:db8:0:: is written 2001:db8::.
  while (head.length > 0 && head[head.length - 1] === 0) head.pop();
  return `${head.map((g) => g.toString(16)).join(':')}::`;
}

/** The 16-bit groups of a piece of a valid IPv6 address (an embedded IPv4 tail counts as two). */
function groupsOf(piece: string, out: number[]): void {
  if (piece === '') return;
  for (const part of piece.split(':')) {
    if (part.includes('.')) {
      const [a = 0, b = 0, c = 0, d = 0] = part.split('.').map(Number);
      out.push((a << 8) | b, (c << 8) | d);
    } else out.push(parseInt(part, 16));
  }
}

/** The eight 16-bit groups of a valid IPv6 address. */
function expandIpv6(ip: string): number[] {
  const gap = ip.indexOf('::');
  const head: number[] = [];
  if (gap < 0) {
    groupsOf(ip, head);
    return head;
  }
  const tail: number[] = [];
  groupsOf(ip.slice(0, gap), head);
  groupsOf(ip.slice(gap + 2), tail);
  while (head.length + tail.length < 8) head.push(0);
  return head.concat(tail);
}

/** `Ada.Lovelace@Example.COM` → `A***@example.com`: one character of the local part, never its length. */
export function maskEmail(text: string): string | undefined {
  const at = text.lastIndexOf('@');
  const local = text.slice(0, at);
  const domain = text.slice(at + 1);
  if (at <= 0 || domain === '' || /[\s@]/.test(domain) || /\s/.test(local)) return undefined;
  return `${String.fromCodePoint(local.codePointAt(0)!)}***@${domain.toLowerCase()}`;
}

/** A value the action cannot read (not an IP, not an e-mail) is dropped: a rule never lets the raw value through. */
function transform(value: JsonValue, action: PrivacyAction, secret: string): Outcome {
  switch (action) {
    case 'drop':
      return DROP;
    case 'hash':
      return hashValue(value, secret);
    case 'truncate-ip':
      return (typeof value === 'string' && truncateIp(value)) || DROP;
    case 'mask-email':
      return (typeof value === 'string' && maskEmail(value)) || DROP;
  }
}

function isContainer(v: unknown): v is Record<string, JsonValue> | JsonValue[] {
  return typeof v === 'object' && v !== null;
}

/** The keys (or indexes) of `node` one pointer segment names; `*` names them all. */
function matching(node: Record<string, JsonValue> | JsonValue[], segment: string): string[] {
  if (Array.isArray(node)) {
    if (segment === '*') return node.map((_, i) => String(i));
    return /^(0|[1-9]\d*)$/.test(segment) && Number(segment) < node.length ? [segment] : [];
  }
  if (segment === '*') return Object.keys(node);
  return Object.hasOwn(node, segment) ? [segment] : [];
}

function applyAt(node: Record<string, JsonValue> | JsonValue[], path: readonly string[], depth: number, action: PrivacyAction, secret: string): void {
  const last = depth === path.length - 1;
  for (const key of matching(node, path[depth]!)) {
    const value = (node as Record<string, JsonValue>)[key]!;
    if (!last) {
      if (!isContainer(value)) continue;
      // Copied before it is changed: records of one request can share a nested value (a `data=`
      // object under an array body), and a value hashed twice would no longer join.
      const copy = Array.isArray(value) ? value.slice() : { ...value };
      (node as Record<string, JsonValue>)[key] = copy;
      applyAt(copy, path, depth + 1, action, secret);
      continue;
    }
    const out = transform(value, action, secret);
    if (out !== DROP) (node as Record<string, JsonValue>)[key] = out;
    else if (Array.isArray(node)) node[Number(key)] = null;
    else delete node[key];
  }
}

/**
 * Applies the plan to one normalized record, in place, before it is queued. The request context
 * (`_ip`) is shared by the records of a request: `applyPrivacyToContext` treats it once.
 */
export function applyPrivacy(record: TrackedRecord, plan: PrivacyPlan): void {
  for (const { target, action } of plan.rules) {
    if (target.kind === 'property') applyAt(record.properties, target.path, 0, action, plan.secret);
    else if (target.kind === 'uid') {
      if (record.uid !== undefined) record.uid = hashValue(record.uid, plan.secret) as string;
    } else if (target.kind === 'sid') {
      if (record.sid !== undefined) record.sid = hashValue(record.sid, plan.secret) as string;
    }
  }
}

/** Applies the `_ip` rule to a request's captured context, in place. */
export function applyPrivacyToContext(context: RequestContext, plan: PrivacyPlan): void {
  for (const { target, action } of plan.rules) {
    if (target.kind !== 'ip' || context.ip === undefined) continue;
    const out = transform(context.ip, action, plan.secret);
    if (out === DROP) delete context.ip;
    else context.ip = out as string;
  }
}
