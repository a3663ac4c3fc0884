import type { ErrorBody } from '../../core/errors';

/** Where Segment's HTTP API is served: its SDKs are pointed at `<relay>/v1`. */
export const SEGMENT_PREFIX = '/v1';

export const isSegmentPath = (path: string): boolean => path === SEGMENT_PREFIX || path.startsWith(`${SEGMENT_PREFIX}/`);

/**
 * A refusal on a `/v1` path. `code` and `message` at the top are what analytics-python reads
 * before it drops a 4xx (without them it retries it); `success: false` is what analytics-java
 * reads; `error` is v3's shape, which the request history and the live view read.
 */
export function segmentErrorBody(error: ErrorBody): Record<string, unknown> {
  return { success: false, ...error, error };
}
