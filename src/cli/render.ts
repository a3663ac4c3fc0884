import { redactingReplacer } from '../core/redact';
import { activeTokens, type RateLimit, type Tracker, type TrackerToken } from '../core/trackers/types';
import { stringifyExactJson } from '../core/records/exact-json';

/** Enough of a token to recognise it and to pass to revoke-token, not enough to use it. */
export function tokenHint(token: string): string {
  return `${token.slice(0, 12)}…`;
}

function rateLimitText(limit: RateLimit | null): string {
  if (!limit) return 'none';
  return `${limit.recordsPerSecond} records/s${limit.burst === undefined ? '' : `, burst ${limit.burst}`}`;
}

/** Columns padded to their widest cell; the last column is left ragged so long messages do not pad every line. */
export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((r) => (r[col] ?? '').length)));
  return rows.map((r) => r.map((cell, col) => (col === r.length - 1 ? cell : cell.padEnd(widths[col]!))).join('  ')).join('\n');
}

export function renderTrackerList(trackers: Tracker[]): string {
  if (trackers.length === 0) return 'No trackers yet. Create one: tributary trackers create --name <name>';
  const rows = trackers.map((t) => [
    t.id,
    t.name,
    t.timeZone,
    `${activeTokens(t).length}/${t.tokens.length}`,
    rateLimitText(t.rateLimit),
    String(t.destinations.length),
  ]);
  return table([['ID', 'NAME', 'TIME ZONE', 'ACTIVE TOKENS', 'RATE LIMIT', 'DESTINATIONS'], ...rows]);
}

function tokenState(t: TrackerToken): string {
  return t.revokedAt ? `revoked ${t.revokedAt}` : 'active';
}

/** Full tokens: `show` is how an operator reads a token back, and revoked ones are useless anyway. */
export function renderTrackerDetails(t: Tracker): string {
  const destinations = t.destinations.length === 0 ? 'none' : t.destinations.map((d) => `${d.id} (${d.type}${d.enabled ? '' : ', disabled'})`).join(', ');
  const details = table([
    ['  name', t.name],
    ['  time zone', t.timeZone],
    ['  CORS origins', t.corsOrigins.length === 0 ? 'none (browsers refused)' : t.corsOrigins.join(' ')],
    ['  rate limit', rateLimitText(t.rateLimit)],
    ['  capture context', t.captureContext ? 'yes (client IP, user agent, referer)' : 'no'],
    ['  invalid unicode', t.invalidUnicode === 'replace' ? 'replaced with U+FFFD' : 'refused (400)'],
    ['  dedup window', t.dedupWindowHours > 0 ? `${t.dedupWindowHours} h (client keys: _id, Idempotency-Key)` : 'off'],
    ['  partitions', t.partitions > 1 ? `${t.partitions} (by _uid, _sid; delivered in parallel)` : '1'],
    ['  archive', t.archiveDays > 0 ? `${t.archiveDays} days of accepted records (backfill, replay)` : 'off'],
    ['  destinations', destinations],
    ['  personal data', t.privacyRules.length === 0 ? 'stored as sent (no rules)' : t.privacyRules.map((r) => `${r.property}: ${r.action}`).join(', ')],
    ['  created', t.createdAt],
  ]);
  const tokens = table(t.tokens.map((tok) => [`  ${tok.token}`, tokenState(tok), `created ${tok.createdAt}`]));
  return [`Tracker ${t.id}`, details, '', 'Tokens', tokens].join('\n');
}

/** Destination secrets never reach a terminal or a script's log. */
export function json(value: unknown): string {
  return stringifyExactJson(value, redactingReplacer, 2);
}
