import { randomBytes } from 'node:crypto';
import * as z from 'zod';

/**
 * What a personal-data rule does to a value before the record is stored:
 * - `drop`: the property is removed (an array element becomes null, so the others keep their index);
 * - `hash`: HMAC-SHA256 with the tracker's `privacySecret`, lowercase hex, so equal values still join;
 * - `truncate-ip`: IPv4 keeps its first three octets (`.0`), IPv6 its first 48 bits (`::`);
 * - `mask-email`: the first character of the local part, `***@`, and the domain in lower case.
 */
export const PRIVACY_ACTIONS = ['drop', 'hash', 'truncate-ip', 'mask-email'] as const;
export type PrivacyAction = (typeof PRIVACY_ACTIONS)[number];

/** The most rules a tracker may have: each costs a walk of every record. */
export const MAX_PRIVACY_RULES = 100;

/** Reserved fields a rule may name, and the actions that keep each one a usable value. */
const RESERVED_TARGETS: Readonly<Record<string, readonly PrivacyAction[]>> = {
  // A dropped or masked key would merge different users (or sessions) into one.
  _uid: ['hash'],
  _sid: ['hash'],
  // The client IP captured with the request context (captureContext).
  _ip: ['drop', 'hash', 'truncate-ip'],
};

/** Where a rule applies: a reserved field, or a path into the record's properties (`*` is any key or element). */
export type RuleTarget = { kind: 'uid' } | { kind: 'sid' } | { kind: 'ip' } | { kind: 'property'; path: readonly string[] };

export const PrivacyRuleSchema = z
  .object({
    /** A top-level property name, a JSON pointer into the properties (`/address/email`; a `*` segment is every key or element), `_uid`, `_sid` or `_ip`. */
    property: z.string().min(1, 'a rule needs a property: a name, a JSON pointer such as /address/email, _uid, _sid or _ip').max(1000),
    action: z.enum(PRIVACY_ACTIONS, { error: `an action is ${PRIVACY_ACTIONS.join(', ')}` }),
  })
  .strict();
export type PrivacyRule = z.infer<typeof PrivacyRuleSchema>;

/** RFC 6901: `~1` is `/`, `~0` is `~`; any other `~` is not a pointer. */
function pointerSegments(pointer: string): string[] | string {
  const segments = pointer.slice(1).split('/');
  for (const s of segments) if (/~(?![01])/.test(s)) return `${pointer} is not a JSON pointer: ~ must be followed by 0 or 1 (~0 is ~, ~1 is /)`;
  return segments.map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** The rule's target, or why the rule is refused. */
export function ruleTarget(rule: PrivacyRule): RuleTarget | string {
  const { property, action } = rule;
  if (property.startsWith('/')) {
    const path = pointerSegments(property);
    return typeof path === 'string' ? path : { kind: 'property', path };
  }
  if (property.startsWith('_') && !property.startsWith('__')) {
    const allowed = RESERVED_TARGETS[property];
    if (!allowed) return `${property} is a reserved field, not a property; a rule names a property, a JSON pointer (/address/email), _uid, _sid or _ip`;
    if (!allowed.includes(action)) return `${property} takes ${allowed.join(' or ')}, not ${action}`;
    return { kind: property === '_uid' ? 'uid' : property === '_sid' ? 'sid' : 'ip' };
  }
  return { kind: 'property', path: [property] };
}

const targetKey = (t: RuleTarget): string => (t.kind === 'property' ? JSON.stringify(t.path) : t.kind);

/** The rules of one tracker, each refusal naming the rule by its index, property and action. */
export const PrivacyRulesSchema = z
  .array(PrivacyRuleSchema)
  .max(MAX_PRIVACY_RULES, `at most ${MAX_PRIVACY_RULES} personal-data rules`)
  .superRefine((rules, ctx) => {
    const seen = new Map<string, number>();
    rules.forEach((rule, i) => {
      const target = ruleTarget(rule);
      const name = `rule ${rule.property} → ${rule.action}`;
      if (typeof target === 'string') return ctx.addIssue({ code: 'custom', path: [i, 'property'], message: `${name}: ${target}` });
      const key = targetKey(target);
      const first = seen.get(key);
      if (first !== undefined) return ctx.addIssue({ code: 'custom', path: [i, 'property'], message: `${name}: rule ${first} already applies to ${rule.property}; keep one rule per property` });
      seen.set(key, i);
    });
  });

/** 32 random bytes, base64url: the HMAC key of a tracker's `hash` rules. */
export function generatePrivacySecret(): string {
  return randomBytes(32).toString('base64url');
}

/** At least 128 bits' worth of text, so a hashed e-mail cannot be found by guessing the key. */
export const PrivacySecretSchema = z.string().min(22, 'a privacy secret has at least 22 characters').max(200);
