import { DateTime } from 'luxon';

/**
 * `YYYY-MM-DDThh:mm[:ss[.fff…]][Z|±hh[:]mm]`. A space may stand for the `T`. Anything else
 * (week dates, ordinal dates, bare dates) is refused so that a typo never becomes a wrong time.
 */
const ISO_LOCAL = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;

export type EventTimeResult = { ok: true; iso: string } | { ok: false; reason: string };

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/**
 * Reads a client `_event_at`. Without an offset the time is local to `timeZone` (an IANA zone);
 * the result is UTC with millisecond precision (finer fractions are truncated). A local time that
 * falls in a daylight-saving gap is moved forward by the gap, as luxon does; an ambiguous one
 * takes the earlier offset.
 */
export function parseEventTime(input: string, timeZone: string): EventTimeResult {
  const m = ISO_LOCAL.exec(input);
  if (!m) return { ok: false, reason: 'expected YYYY-MM-DDThh:mm:ss, optionally with fractional seconds and Z or ±hh:mm' };
  const [year, month, day, hour, minute] = [m[1], m[2], m[3], m[4], m[5]].map(Number) as [number, number, number, number, number];
  const second = m[6] === undefined ? 0 : Number(m[6]);
  const millis = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, '0'));
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return { ok: false, reason: 'no such date' };
  if (hour > 23 || minute > 59 || second > 59) return { ok: false, reason: 'no such time of day' };

  const offset = m[8];
  let epochMs: number;
  if (offset !== undefined) {
    epochMs = Date.UTC(year, month - 1, day, hour, minute, second, millis);
    if (year < 100) epochMs = new Date(epochMs).setUTCFullYear(year);
    if (offset !== 'Z' && offset !== 'z') {
      const sign = offset[0] === '-' ? -1 : 1;
      const digits = offset.slice(1).replace(':', '');
      const oh = Number(digits.slice(0, 2));
      const om = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
      if (oh > 23 || om > 59) return { ok: false, reason: 'no such offset' };
      epochMs -= sign * (oh * 60 + om) * 60_000;
    }
  } else if (timeZone === 'UTC') {
    epochMs = Date.UTC(year, month - 1, day, hour, minute, second, millis);
    if (year < 100) epochMs = new Date(epochMs).setUTCFullYear(year);
  } else {
    const local = DateTime.fromObject({ year, month, day, hour, minute, second, millisecond: millis }, { zone: timeZone });
    if (!local.isValid) return { ok: false, reason: local.invalidExplanation ?? 'invalid in the tracker time zone' };
    epochMs = local.toMillis();
  }
  const date = new Date(epochMs);
  if (Number.isNaN(date.getTime())) return { ok: false, reason: 'out of range' };
  return { ok: true, iso: date.toISOString() };
}

export function isValidTimeZone(zone: string): boolean {
  return DateTime.local().setZone(zone).isValid;
}
