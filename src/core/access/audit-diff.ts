import { REDACTED, redactingReplacer, tokenHint } from '../redact';

/** One changed value: where (`destinations[bq].settings.dataset`), and what it was and became, secrets masked. */
export interface FieldChange {
  path: string;
  before?: unknown;
  after?: unknown;
}

/**
 * Keys whose values an audit entry never holds: the secrets of src/core/redact.ts, and what only the
 * audit log keeps records of (a webhook source's signing secrets, a password's hash, a tracker's
 * token, shown by its hint).
 */
const AUDIT_SECRETS = new Set(['secret', 'previousSecret', 'passwordHash', 'digest']);

/** A value longer than this is cut: an audit entry says what changed, it is no backup. */
const MAX_VALUE_CHARS = 2000;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function maskedLeaf(key: string, value: unknown): unknown {
  if (value === undefined) return undefined;
  if (AUDIT_SECRETS.has(key)) return REDACTED;
  if (key === 'token' && typeof value === 'string') return tokenHint(value);
  // What the answers hide, the log hides the same way (a secret setting; a URL's password).
  return redactingReplacer(key, value);
}

/** A value with every secret inside it masked, and cut to a readable size. */
export function maskValue(value: unknown, key = ''): unknown {
  const top = maskedLeaf(key, value);
  if (top !== value) return top;
  const text = JSON.stringify(value, (k, v: unknown) => (typeof v === 'bigint' ? v.toString() : k === '' ? v : maskedLeaf(k, v)));
  if (text === undefined) return undefined;
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS)}… (${text.length} characters)` : JSON.parse(text);
}

/** Arrays whose items are named (destinations, sources, tokens, rules) are compared item by item. */
function itemName(item: unknown): string | undefined {
  if (!isPlainObject(item)) return undefined;
  for (const k of ['id', 'property', 'token']) if (typeof item[k] === 'string') return k === 'token' ? tokenHint(item[k]) : item[k];
  return undefined;
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)) === JSON.stringify(b, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

/**
 * What changed between two states of an object (a tracker, a person, a token), field by field. A
 * secret that changed is listed with both sides masked, so the entry says *that* it changed.
 */
export function diff(before: unknown, after: unknown, path = '', key = ''): FieldChange[] {
  if (same(before, after)) return [];
  if (isPlainObject(before) && isPlainObject(after) && !AUDIT_SECRETS.has(key)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
    return keys.flatMap((k) => diff(before[k], after[k], path ? `${path}.${k}` : k, k));
  }
  if (Array.isArray(before) && Array.isArray(after) && [...before, ...after].every((i) => itemName(i) !== undefined)) {
    const byName = (list: unknown[]) => new Map(list.map((i) => [itemName(i)!, i]));
    const [b, a] = [byName(before), byName(after)];
    return [...new Set([...b.keys(), ...a.keys()])].flatMap((name) => diff(b.get(name), a.get(name), `${path}[${name}]`));
  }
  return [{ path: path || '(whole)', ...(before !== undefined ? { before: maskValue(before, key) } : {}), ...(after !== undefined ? { after: maskValue(after, key) } : {}) }];
}
