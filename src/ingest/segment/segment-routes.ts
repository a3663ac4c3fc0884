import Router from '@koa/router';
import { ApiError } from '../../core/errors';
import { parseExactJson } from '../../core/records/exact-json';
import type { IngestContext } from '../ingest-context';
import { originAllowed, resolveTracker, type IngestDeps } from '../ingest-route';
import { readBodyBytes } from '../read-body';
import { utf8Text } from '../utf8-text';
import { segmentBodyLimits } from './limits';
import type { SegmentType } from './map-message';
import { SEGMENT_PREFIX } from './segment-answers';
import { mapSegmentRequest, storeSegment, type SegmentOutcome } from './segment-intake';
import { segmentSettings } from './settings';

/**
 * The batch paths as each SDK calls them: `/batch` (Node, Python, Go), `/import` (Ruby),
 * `/import/` (Java, trailing slash), `/b` (analytics-next batching, Swift, Kotlin, React Native).
 */
export const SEGMENT_BATCH_PATHS = ['/batch', '/import', '/import/', '/b'] as const;

/** One message per request: the long paths, and analytics-next's default, the type's first letter. */
export const SEGMENT_SINGLE_PATHS: Readonly<Record<string, SegmentType>> = {
  '/identify': 'identify',
  '/track': 'track',
  '/page': 'page',
  '/screen': 'screen',
  '/group': 'group',
  '/alias': 'alias',
  '/i': 'identify',
  '/t': 'track',
  '/p': 'page',
  '/s': 'screen',
  '/g': 'group',
  '/a': 'alias',
};

/** How long a client may keep the settings: a changed tracker reaches browsers within it. */
const SETTINGS_MAX_AGE_SECONDS = 300;

async function readJson(ctx: IngestContext, deps: IngestDeps, single: boolean): Promise<{ body: unknown; raw: Buffer }> {
  const { raw } = await readBodyBytes(ctx, segmentBodyLimits(deps.config.limits, single));
  const text = utf8Text(raw);
  if (text.trim().length === 0) throw new ApiError('ERR_INVALID_PAYLOAD', single ? 'The body is empty: send one message as JSON.' : 'The body is empty: send {"batch": [messages…]}.');
  try {
    return { body: parseExactJson(text), raw };
  } catch (err) {
    // The exact-integer parser recurses: a body nested thousands deep is too deep, not malformed.
    if (err instanceof RangeError) throw new ApiError('ERR_TOO_DEEP', 'The body is nested too deeply to be read.');
    throw new ApiError('ERR_MALFORMED_JSON', `The body is not valid JSON: ${(err as Error).message}`);
  }
}

/**
 * Every answer to a stored request is 200 with a JSON body: analytics-python counts only 200 as
 * sent, analytics-java reads `success`, analytics-ruby parses every body. Rejected messages are
 * listed in `errors`; the rest of the batch is stored.
 */
function renderBatch(ctx: IngestContext, outcome: SegmentOutcome): void {
  ctx.status = 200;
  const body: Record<string, unknown> = { success: true, accepted: outcome.accepted };
  if (outcome.duplicates > 0) body.duplicates = outcome.duplicates;
  body.rejected = outcome.rejected.length;
  if (outcome.rejected.length > 0) body.errors = outcome.rejected;
  ctx.body = body;
}

/** A single call stores one message or is refused whole, with the message's reason. */
function renderSingle(ctx: IngestContext, outcome: SegmentOutcome): void {
  const refusal = outcome.rejected[0];
  if (refusal) throw new ApiError(refusal.code as ApiError['code'], refusal.message, refusal.field);
  ctx.status = 200;
  ctx.body = outcome.duplicates > 0 ? { success: true, accepted: 0, duplicate: true, id: outcome.ids[0] } : { success: true, accepted: 1, id: outcome.ids[0] };
}

/**
 * Segment's HTTP Tracking API under `/v1`, as Segment's and RudderStack's SDKs call it, onto
 * the same records, queue and rules as v3 (docs/segment.md).
 */
export function createSegmentRouter(deps: IngestDeps): Router {
  const router = new Router({ prefix: SEGMENT_PREFIX, strict: true });
  for (const path of SEGMENT_BATCH_PATHS) {
    router.post(path, async (ctx: IngestContext) => {
      const request = await mapSegmentRequest(ctx, await readJson(ctx, deps, false), deps);
      renderBatch(ctx, await storeSegment(ctx, deps, request));
    });
  }
  for (const [path, type] of Object.entries(SEGMENT_SINGLE_PATHS)) {
    router.post(path, async (ctx: IngestContext) => {
      const request = await mapSegmentRequest(ctx, await readJson(ctx, deps, true), deps, type);
      renderSingle(ctx, await storeSegment(ctx, deps, request));
    });
  }
  // analytics-next's own error metrics: answered, so it does not retry them, and dropped.
  router.post('/m', (ctx) => {
    ctx.status = 200;
    ctx.body = { success: true };
  });
  router.get('/projects/:writeKey/settings', async (ctx: IngestContext) => {
    const writeKey = ctx.params.writeKey!;
    ctx.state.presentedToken = writeKey;
    const tracker = await resolveTracker(deps, writeKey);
    ctx.state.trackerId = tracker.id;
    if (!originAllowed(tracker, ctx.get('origin') || undefined)) throw new ApiError('ERR_ORIGIN_NOT_ALLOWED', `Origin ${ctx.get('origin')} is not allowed by this tracker.`);
    ctx.set('Cache-Control', `public, max-age=${SETTINGS_MAX_AGE_SECONDS}`);
    // PUBLIC_URL when set: behind a proxy the request's own host and scheme may be internal ones.
    ctx.body = segmentSettings(writeKey, deps.config.publicUrlConfigured ? deps.config.publicUrl : `${ctx.protocol}://${ctx.host}`);
  });
  return router;
}
