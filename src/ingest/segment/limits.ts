import type { Limits } from '../../core/config';

/**
 * Segment's own limits for its HTTP API, which its SDKs pad below (analytics-node cuts batches at
 * 480 KB, analytics-python at 475 000 bytes, Java at 90 % of 500 KiB): a message at most 32 KB, a
 * batch at most 500 KB and 2 500 messages. The v3 edge's 500 records a request does not apply.
 */
export const SEGMENT_LIMITS = {
  messageBytes: 32 * 1024,
  batchBytes: 500 * 1024,
  batchMessages: 2500,
} as const;

/** The body limits of a `/v1` path: Segment's size, within the relay's own (LIMIT_DECODED_BYTES). */
export function segmentBodyLimits(limits: Limits, single: boolean): Limits {
  const cap = single ? SEGMENT_LIMITS.messageBytes : SEGMENT_LIMITS.batchBytes;
  return { ...limits, decodedBytes: Math.min(limits.decodedBytes, cap) };
}
