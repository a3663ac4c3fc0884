import { InvalidArgumentError } from 'commander';

const UNIT_MS: Readonly<Record<string, number>> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/**
 * A moment on the command line: ISO 8601 (`2026-11-01`, `2026-11-01T08:00:00Z`; a date alone is
 * its midnight, UTC), or a time ago (`90m`, `12h`, `30d`, `2w`), or `now`.
 */
export function parseMoment(value: string, now = Date.now()): Date {
  const text = value.trim();
  if (text === 'now') return new Date(now);
  const ago = /^(\d+)\s*([mhdw])$/.exec(text);
  if (ago) return new Date(now - Number(ago[1]) * UNIT_MS[ago[2]!]!);
  if (/^\d{4}-\d{2}-\d{2}/.test(text)) {
    const at = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : text);
    if (Number.isFinite(at)) return new Date(at);
  }
  throw new InvalidArgumentError(`expected a date or time (2026-11-01, 2026-11-01T08:00:00Z), a time ago (90m, 12h, 30d, 2w) or now; got ${value}.`);
}
