import Router from '@koa/router';
import type { IngestContext } from './ingest-context';
import { ApiError } from '../core/errors';
import { RECORD_KINDS, type RecordKind } from '../core/records/types';
import { FIXED_SUFFIXES, sendFixed, type FixedResponse } from './fixed-responses';
import { ingest, type IngestDeps, type IngestOutcome } from './ingest-route';
import { createReadBody } from './read-body';

/**
 * 202 when something was queued; 200 when every valid record was a duplicate (accepted before,
 * within the tracker's window): the retry succeeds, nothing new is queued.
 */
function renderJson(ctx: IngestContext, outcome: IngestOutcome, batch: boolean): void {
  const { accepted, duplicates, results } = outcome;
  if (!batch) {
    const only = results[0]!;
    if ('error' in only) throw new ApiError(only.error.code, only.error.message, only.error.field);
    ctx.status = only.duplicate ? 200 : 202;
    ctx.body = only.duplicate ? { accepted: 0, duplicate: true, id: only.id } : { accepted: 1, id: only.id };
    return;
  }
  const rejected = results.length - accepted.length - duplicates;
  if (accepted.length === 0 && duplicates === 0) {
    ctx.status = 400;
    ctx.body = { error: { code: 'ERR_NO_VALID_RECORDS', message: 'No record in the request was valid; see results.' }, accepted: 0, rejected, results };
    return;
  }
  ctx.status = accepted.length > 0 ? 202 : 200;
  ctx.body = duplicates > 0 ? { accepted: accepted.length, duplicates, rejected, results } : { accepted: accepted.length, rejected, results };
}

/**
 * `/v3/{user,session,event}` by GET and POST, and `/tracker.gif` / `/tracker.js` under each.
 * HEAD answers the headers of GET and stores nothing: link checkers and monitors send HEAD.
 */
export function createV3Router(deps: IngestDeps): Router {
  const router = new Router({ prefix: '/v3' });
  const readBody = createReadBody(deps.config.limits);

  const jsonRoute = (kind: RecordKind) => async (ctx: IngestContext) => {
    if (ctx.method === 'HEAD') {
      ctx.status = 204;
      return;
    }
    const outcome = await ingest(ctx, kind, deps);
    renderJson(ctx, outcome, outcome.batch);
  };

  const fixedRoute = (kind: RecordKind, fixed: FixedResponse) => async (ctx: IngestContext) => {
    ctx.state.fixed = fixed;
    if (ctx.method !== 'HEAD') {
      const outcome = await ingest(ctx, kind, deps);
      if (outcome.accepted.length === 0 && outcome.duplicates === 0) {
        const first = outcome.results.find((r) => 'error' in r);
        if (first && 'error' in first) throw new ApiError(first.error.code, first.error.message, first.error.field);
      }
    }
    sendFixed(ctx, fixed, 200);
  };

  for (const kind of RECORD_KINDS) {
    router.get(`/${kind}`, readBody, jsonRoute(kind));
    router.post(`/${kind}`, readBody, jsonRoute(kind));
    for (const fixed of Object.keys(FIXED_SUFFIXES) as FixedResponse[]) {
      router.get(`/${kind}/${FIXED_SUFFIXES[fixed]}`, readBody, fixedRoute(kind, fixed));
    }
  }
  return router;
}
