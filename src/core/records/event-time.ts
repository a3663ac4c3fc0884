import { IANAZone, Info } from 'luxon';

/**
 * `YYYY-MM-DDThh:mm[:ss[.fff…]][Z|±hh[:]mm]`. A space may stand for the `T`, and for the `+` of
 * an offset: an unencoded `+` in a GET URL arrives as a space. Anything else (week dates, ordinal
 * dates, bare dates) is refused so that a typo never becomes a wrong time.
 */
const ISO_LOCAL = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|z|[+ -]\d{2}(?::?\d{2})?)?$/;

export type EventTimeResult = { ok: true; iso: string } | { ok: false; reason: string };
export type EventTimeMsResult = { ok: true; ms: number } | { ok: false; reason: string };

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Arithmetic, not a Date: this runs for every timed record, and a Date a call showed in profiles. */
function daysInMonth(year: number, month: number): number {
  if (month !== 2) return MONTH_DAYS[month - 1]!;
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
}

const MINUTE = 60_000;
const DAY = 86_400_000;

/** The wall-clock fields read as if they were UTC; years 1–99 are not shifted to 19xx. */
function wallClockMs(year: number, month: number, day: number, hour: number, minute: number, second: number, millis: number): number {
  const ms = Date.UTC(year, month - 1, day, hour, minute, second, millis);
  return year < 100 ? new Date(ms).setUTCFullYear(year) : ms;
}

/**
 * The instant a wall-clock time names in `zone`, resolved as Temporal's "compatible" does: an
 * ambiguous time (clocks turned back) is the earlier instant; a time in a gap (clocks turned
 * forward) is moved forward by the gap. Candidate offsets are those in force a day either side.
 */
function zonedToUtc(wall: number, zone: IANAZone): number {
  const before = zone.offset(wall - DAY) * MINUTE;
  const after = zone.offset(wall + DAY) * MINUTE;
  const fits = [wall - before, wall - after].filter((t) => zone.offset(t) * MINUTE === wall - t);
  return fits.length > 0 ? Math.min(...fits) : wall - before;
}

/**
 * Reads a client `_event_at`. Without an offset the time is local to `timeZone` (an IANA zone);
 * the result is UTC with millisecond precision (finer fractions are truncated).
 */
export function parseEventTime(input: string, timeZone: string): EventTimeResult {
  const read = eventTimeMs(input, timeZone);
  return read.ok ? { ok: true, iso: new Date(read.ms).toISOString() } : read;
}

/** As parseEventTime, as milliseconds since the epoch: for callers that compute with the time. */
export function eventTimeMs(input: string, timeZone: string): EventTimeMsResult {
  const m = ISO_LOCAL.exec(input);
  if (!m) return { ok: false, reason: 'expected YYYY-MM-DDThh:mm:ss, optionally with fractional seconds and Z or ±hh:mm' };
  const [year, month, day, hour, minute] = [m[1], m[2], m[3], m[4], m[5]].map(Number) as [number, number, number, number, number];
  const second = m[6] === undefined ? 0 : Number(m[6]);
  const millis = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, '0'));
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return { ok: false, reason: 'no such date' };
  if (hour > 23 || minute > 59 || second > 59) return { ok: false, reason: 'no such time of day' };

  const wall = wallClockMs(year, month, day, hour, minute, second, millis);
  const offset = m[8];
  let epochMs: number;
  if (offset === 'Z' || offset === 'z' || (offset === undefined && timeZone === 'UTC')) {
    epochMs = wall;
  } else if (offset !== undefined) {
    const sign = offset[0] === '-' ? -1 : 1;
    const digits = offset.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
    if (oh > 23 || om > 59) return { ok: false, reason: 'no such offset' };
    epochMs = wall - sign * (oh * 60 + om) * MINUTE;
  } else {
    const zone = IANAZone.create(timeZone);
    if (!zone.isValid) return { ok: false, reason: `the tracker time zone ${timeZone} is unknown` };
    epochMs = zonedToUtc(wall, zone);
  }
  if (!Number.isFinite(epochMs) || Math.abs(epochMs) > 8.64e15) return { ok: false, reason: 'out of range' };
  return { ok: true, ms: epochMs };
}

/**
 * The zone as `DateTime.setZone` reads it (an IANA name, `UTC`, `UTC+3`…), checked without making
 * a DateTime: that reads the system's locale and zone through Intl, whose first use costs about
 * 10 ms, which a CLI command parsing a `UTC` tracker then paid for nothing.
 */
export function isValidTimeZone(zone: string): boolean {
  return Info.normalizeZone(zone).isValid;
}
