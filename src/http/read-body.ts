import type { Middleware } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import type { Limits } from '../config';
import { ApiError } from '../errors';
import type { FlatParams, ParsedBody } from '../records/payload';

const JSON_TYPES = ['application/json', 'application/*+json', 'text/plain'];
const FORM_TYPES = ['application/x-www-form-urlencoded'];
const ENCODINGS = new Set(['identity', 'gzip', 'x-gzip', 'deflate', 'br']);

/** Name → string, or string[] when the name repeats. Null-prototype, so any name is plain data. */
export function flatParams(params: URLSearchParams): FlatParams {
  const out = Object.create(null) as FlatParams;
  for (const [k, v] of params) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

function hasBody(headers: Record<string, string | string[] | undefined>): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Reads a POST body within the limits and parses it to `ctx.state.body`.
 * koa-body reads and inflates (gzip, deflate, br) and stops at `decodedBytes`, so a gzip bomb
 * is a 413 after at most that much memory. We take the text and parse it ourselves: JSON.parse
 * keeps `__proto__` as data (co-body's parser rejects it), and form fields stay flat strings.
 */
export function createReadBody(limits: Limits): Middleware {
  const reader = koaBody({
    json: false,
    urlencoded: false,
    multipart: false,
    text: true,
    textTypes: [...JSON_TYPES, ...FORM_TYPES],
    textLimit: limits.decodedBytes,
    parsedMethods: [HttpMethodEnum.POST],
    patchNode: false,
  });

  return async (ctx, next) => {
    const headers = ctx.req.headers;
    if (ctx.method !== 'POST' || !hasBody(headers)) {
      ctx.state.body = { kind: 'none' } satisfies ParsedBody;
      return next();
    }
    const declared = Number(headers['content-length'] ?? 0);
    if (declared > limits.requestBytes) throw new ApiError('ERR_PAYLOAD_TOO_LARGE', `The body is larger than ${limits.requestBytes} bytes.`);
    const encoding = (headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    if (!ENCODINGS.has(encoding)) throw new ApiError('ERR_UNSUPPORTED_ENCODING', `Content-Encoding ${encoding} is not supported; use gzip, deflate or identity.`);
    if (encoding === 'x-gzip') headers['content-encoding'] = 'gzip';
    // sendBeacon with a Blob of no type sends no Content-Type: read it as JSON text.
    if (!headers['content-type']) headers['content-type'] = 'text/plain';
    const isForm = ctx.is(FORM_TYPES) !== false;
    if (!isForm && ctx.is(JSON_TYPES) === false) {
      throw new ApiError('ERR_UNSUPPORTED_MEDIA_TYPE', `Content-Type ${headers['content-type']} is not supported; send application/json, text/plain or application/x-www-form-urlencoded.`);
    }
    try {
      await reader(ctx, async () => undefined);
    } catch (err) {
      throw bodyError(err, limits);
    }
    const text = typeof ctx.request.body === 'string' ? ctx.request.body : '';
    ctx.state.body = parseBodyText(text, isForm);
    return next();
  };
}

export function parseBodyText(text: string, isForm: boolean): ParsedBody {
  if (isForm) return text.length === 0 ? { kind: 'none' } : { kind: 'form', value: flatParams(new URLSearchParams(text)) };
  if (text.trim().length === 0) return { kind: 'none' };
  try {
    return { kind: 'json', value: JSON.parse(text) as unknown };
  } catch (err) {
    throw new ApiError('ERR_MALFORMED_JSON', `The body is not valid JSON: ${(err as Error).message}`);
  }
}

/** Maps raw-body, inflation and zlib failures to our codes. */
function bodyError(err: unknown, limits: Limits): ApiError {
  const e = err as { type?: string; status?: number; code?: string; message?: string };
  if (e.type === 'entity.too.large' || e.status === 413) {
    return new ApiError('ERR_PAYLOAD_TOO_LARGE', `The decoded body is larger than ${limits.decodedBytes} bytes.`);
  }
  if (typeof e.code === 'string' && e.code.startsWith('Z_')) return new ApiError('ERR_MALFORMED_ENCODING', `The body is not valid for its Content-Encoding: ${e.message ?? e.code}.`);
  if (e.status === 415) return new ApiError('ERR_UNSUPPORTED_ENCODING', e.message);
  return new ApiError('ERR_MALFORMED_BODY', `The body could not be read: ${e.message ?? 'unknown reason'}.`);
}
