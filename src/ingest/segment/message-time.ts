import { eventTimeMs } from '../../core/records/event-time';
import { stringifyExactJson } from '../../core/records/exact-json';

/**
 * When a Segment message happened. The SDKs stamp `timestamp` (or `originalTimestamp`) with the
 * device's clock at the call and `sentAt` with the same clock at the send, so
 * `receivedAt − sentAt` is the device clock's error plus the transit. Segment corrects every
 * message by it; Tributary only past `skewMs` (SEGMENT_CLOCK_SKEW_SECONDS), so that a batch held up
 * a few seconds in transit does not shift and reorder its events (PostHog#98250), while a phone
 * whose clock is hours off is corrected. Explicit times years in the past (an import by a server
 * library) are kept: the server's clock is right, so its `sentAt` is too and nothing shifts.
 */
export interface MessageTime {
  /** `_event_at`, ISO 8601 UTC. */
  eventAt: string;
  /** The client's own text, kept when the stored time differs from it (corrected or unreadable). */
  original?: string;
}

/** Milliseconds since the epoch of a Segment time, or undefined when it is not ISO 8601 text. */
export function segmentTimeMs(value: unknown, timeZone: string): number | undefined {
  if (typeof value !== 'string') return undefined;
  const read = eventTimeMs(value, timeZone);
  return read.ok ? read.ms : undefined;
}

/**
 * `sentMs`: the message's `sentAt`, else its batch's, read once a batch (segmentTimeMs); undefined
 * when neither is readable.
 */
/**
 * A valid time already written as `toISOString` writes it (`2026-11-29T12:00:00.000Z`, what every
 * JavaScript SDK sends): kept as it is, without formatting a Date for each message.
 */
function isCanonical(text: string): boolean {
  return text.length === 24 && text.charCodeAt(23) === 90 && text.charCodeAt(19) === 46 && text.charCodeAt(10) === 84;
}

const FIRST_MS = Date.parse('0001-01-01T00:00:00.000Z');
const LAST_MS = Date.parse('9999-12-31T23:59:59.999Z');

export function messageTime(stamp: unknown, sentMs: number | undefined, receivedAtMs: number, receivedAt: string, timeZone: string, skewMs: number): MessageTime {
  if (stamp === undefined || stamp === null) return { eventAt: receivedAt };
  const at = segmentTimeMs(stamp, timeZone);
  if (at === undefined) return { eventAt: receivedAt, original: typeof stamp === 'string' ? stamp : stringifyExactJson(stamp) };
  const skew = sentMs === undefined ? 0 : receivedAtMs - sentMs;
  if (Math.abs(skew) <= skewMs) return { eventAt: isCanonical(stamp as string) ? (stamp as string) : new Date(at).toISOString() };
  const corrected = new Date(at + skew);
  // A correction that leaves years 0001–9999 (what `_event_at` and the destinations take) is no correction at all.
  if (!(corrected.getTime() >= FIRST_MS && corrected.getTime() <= LAST_MS)) return { eventAt: new Date(at).toISOString() };
  return { eventAt: corrected.toISOString(), original: stamp as string };
}
