import { stringifyExactJson } from './records/exact-json';

/**
 * Destination secrets (an inline service-account key, a database password; a connection string
 * that may hold one, until it is split) and a tracker's privacy secret (with it, a
 * hashed e-mail can be found by hashing guesses) never reach a terminal, a script's log or an
 * admin API response. One list, shared by the CLI's JSON output and the admin API.
 */
const SECRET_KEYS = new Set(['credentials', 'private_key', 'privateKey', 'client_secret', 'privacySecret', 'password']);

/** Whether a setting of this name holds a secret: redacted when shown, encrypted when stored (src/core/secrets). */
export function isSecretKey(key: string): boolean {
  return SECRET_KEYS.has(key);
}

/** What a secret reads as once redacted; sent back unchanged in an update, it means "keep the stored value". */
export const REDACTED = '[redacted]';

/** The password of a URL that carries one: `scheme://user:password@host…` (a connection string not split yet). */
const URL_PASSWORD = /^([a-z][a-z0-9+.-]*:\/\/[^/?#@\s:]*:)([^/?#@\s]*)(@)/i;

/** Whether a value is a URL with a password in it: a secret whatever its setting's name (encrypted when stored too). */
export function hasUrlPassword(value: unknown): value is string {
  return typeof value === 'string' && URL_PASSWORD.test(value);
}

const withoutUrlPassword = (url: string) => url.replace(URL_PASSWORD, `$1${REDACTED}$3`);

/** A `JSON.stringify` replacer that hides every secret, at any depth, and the password of any URL. */
export function redactingReplacer(key: string, value: unknown): unknown {
  if (SECRET_KEYS.has(key) && value !== undefined && value !== null) return REDACTED;
  return hasUrlPassword(value) ? withoutUrlPassword(value) : value;
}

/** A value's JSON text with its secrets hidden; a bigint (an integer beyond 2^53) is written with all its digits. */
export function redactedJson(value: unknown): string {
  return stringifyExactJson(value, redactingReplacer);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A client edits settings it only ever saw redacted; when it sends `[redacted]` back for a secret,
 * the stored secret is kept, rather than replaced by the marker.
 */
export function restoreRedacted(next: Record<string, unknown>, stored: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(next)) {
    const before = stored[key];
    if (SECRET_KEYS.has(key) && value === REDACTED && before !== undefined) out[key] = before;
    // A URL sent back with its password redacted and nothing else changed: the stored URL stays.
    else if (hasUrlPassword(before) && value === withoutUrlPassword(before)) out[key] = before;
    else if (isPlainObject(value) && isPlainObject(before)) out[key] = restoreRedacted(value, before);
    else out[key] = value;
  }
  return out;
}

/**
 * URL parameter names whose values are credentials: the tracker token, and what other senders put
 * in a URL (an API key, a signature). Matched by name, whatever the value looks like.
 */
const SECRET_PARAMETER = /token|secret|passw|signature|^sig$|api_?key|access_?key|auth/i;

export function isSecretParameter(name: string): boolean {
  return SECRET_PARAMETER.test(name);
}

/** A query string with every secret parameter's value replaced by {@link REDACTED}. */
export function redactQueryString(querystring: string): string {
  if (querystring === '') return '';
  const params = new URLSearchParams(querystring);
  for (const name of new Set(params.keys())) if (isSecretParameter(name)) params.set(name, REDACTED);
  return params.toString().replaceAll('%5Bredacted%5D', REDACTED);
}

/**
 * Enough of a token to tell two apart (`trk_AbCd…`, 24 bits of its 256), never enough to use it:
 * what an owner compares with the tokens of `tributary trackers show`.
 */
export function tokenHint(token: string): string {
  return `${token.slice(0, token.startsWith('trk_') ? 8 : 4)}…`;
}
