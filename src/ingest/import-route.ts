import Router from '@koa/router';
import type { Config } from '../core/config';
import { ApiError } from '../core/errors';
import { importRecords, importRefusal, type ImportSink } from '../core/import/importer';
import { ImportInputError, readImport, type ImportFormat } from '../core/import/reader';
import { RECORD_KINDS, type RecordKind } from '../core/records/types';
import type { IngestContext } from './ingest-context';
import { resolveTracker } from './ingest-route';
import { headerToken } from './payload';
import type { TrackerResolver } from './resolver';

/**
 * `POST /v3/import/{event,user,session}`: an import for scripts, as `tributary import` does it
 * (src/core/import): the body is NDJSON (or CSV with a header row, or one JSON array), streamed
 * as it arrives, gzip undone; each record is checked as the v3 edge checks it, given a
 * deterministic `_id` when it has none, and written to the history lane, which yields to live
 * records. The answer comes once every record is in the lane: 200 with the counts and the first
 * refused lines by number. A file sent in pieces passes `first_line`, so that its lines keep
 * their numbers, and their `_id`s, whichever piece is sent again.
 */

export interface ImportRouteDeps {
  config: Readonly<Config>;
  resolver: TrackerResolver;
  importSink: ImportSink;
}

const FORMATS: ReadonlyArray<[RegExp, ImportFormat]> = [
  [/^application\/(x-)?ndjson|^application\/(x-)?jsonl(ines)?|^application\/json-seq|^text\/plain/i, 'ndjson'],
  [/^text\/csv/i, 'csv'],
  [/^application\/json/i, 'json'],
];

function formatOf(contentType: string): ImportFormat {
  if (contentType === '') return 'ndjson';
  const match = FORMATS.find(([pattern]) => pattern.test(contentType));
  if (!match) throw new ApiError('ERR_UNSUPPORTED_MEDIA_TYPE', 'An import is application/x-ndjson (one JSON object a line), text/csv (a header row, then one record a row) or application/json (one array).');
  return match[1];
}

function gzipped(encoding: string): boolean {
  const value = encoding.trim().toLowerCase();
  if (value === '' || value === 'identity') return false;
  if (value === 'gzip' || value === 'x-gzip') return true;
  throw new ApiError('ERR_UNSUPPORTED_ENCODING', 'An import body is sent as it is or with Content-Encoding: gzip.');
}

function firstLine(value: string | null): number {
  if (value === null) return 1;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new ApiError('ERR_INVALID_FIELD', 'first_line is the number of the body’s first line in its file: a whole number from 1.', 'first_line');
  return n;
}

export function createImportRouter(deps: ImportRouteDeps): Router {
  const router = new Router({ prefix: '/v3/import' });
  router.post('/:kind', async (ctx: IngestContext) => {
    const kind = (ctx as IngestContext & { params: { kind: string } }).params.kind as RecordKind;
    if (!RECORD_KINDS.includes(kind)) throw new ApiError('ERR_NOT_FOUND', `No such import: /v3/import/${kind}; the kinds are ${RECORD_KINDS.join(', ')}.`);
    const query = new URLSearchParams(ctx.querystring);
    const token = headerToken(ctx.get('authorization') || undefined) ?? query.get('_token') ?? undefined;
    ctx.state.presentedToken = token;
    const tracker = await resolveTracker(deps, token);
    ctx.state.trackerId = tracker.id;
    const refusal = importRefusal(tracker);
    if (refusal) throw new ApiError('ERR_INVALID_PAYLOAD', refusal);
    const format = formatOf(ctx.get('content-type'));
    const gzip = gzipped(ctx.get('content-encoding'));
    const offset = firstLine(query.get('first_line')) - 1;
    let summary;
    try {
      summary = await importRecords(readImport(ctx.req, format, gzip), { tracker, kind, limits: deps.config.limits, sink: deps.importSink, lineOffset: offset });
    } catch (err) {
      if (err instanceof ImportInputError) throw new ApiError('ERR_INVALID_PAYLOAD', err.message);
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'Z_DATA_ERROR' || code === 'Z_BUF_ERROR') throw new ApiError('ERR_MALFORMED_ENCODING', `The body is not valid gzip: ${(err as Error).message}`);
      if (code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE') throw new ApiError('ERR_MALFORMED_BODY', 'The body ended before it was complete; what was read is in the lane, and sending the same body again doubles nothing.');
      throw err;
    }
    ctx.state.recordCount = summary.read;
    const nothingValid = summary.imported === 0 && summary.duplicates === 0 && summary.failed > 0;
    ctx.status = nothingValid ? 400 : 200;
    ctx.body = nothingValid ? { error: { code: 'ERR_NO_VALID_RECORDS', message: 'No line of the body was a valid record; see errors.' }, ...summary } : summary;
  });
  return router;
}
