import type { IncomingMessage } from 'node:http';
import type { Transform } from 'node:stream';
import { createBrotliDecompress, createUnzip } from 'node:zlib';
import type { Middleware } from 'koa';
import type { IngestContext, IngestState } from './ingest-context';
import type { Limits } from '../core/config';
import { ApiError } from '../core/errors';
import { parseV3BodyText } from './body-shape';
import { utf8Text } from './utf8-text';
import { parseExactJson } from '../core/records/exact-json';
import { flatParams, type ParsedBody } from './payload';

const JSON_TYPES = ['application/json', 'application/*+json', 'text/plain'];
/** The Content-Types nearly every client sends, recognised without type-is's parsing (a few µs a request). */
const PLAIN_JSON = new Set(['application/json', 'application/json; charset=utf-8', 'application/json;charset=utf-8', 'text/plain', 'text/plain;charset=UTF-8']);
const FORM_TYPE = 'application/x-www-form-urlencoded';
/** JSON is UTF-8 (RFC 8259); ASCII is a subset. Any other declared charset would be misread. */
const CHARSETS = new Set(['', 'utf-8', 'utf8', 'us-ascii']);
/**
 * `createUnzip` sniffs the gzip or zlib header, so a body labelled `deflate` that is really gzip
 * (or the reverse) still decodes. Raw deflate without the zlib wrapper is refused as malformed.
 */
const DECODERS: Readonly<Record<string, (() => Transform) | null>> = {
  identity: null,
  gzip: () => createUnzip(),
  'x-gzip': () => createUnzip(),
  deflate: () => createUnzip(),
  br: () => createBrotliDecompress(),
};

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** One coding at most: `gzip, identity` is gzip; stacked codings are refused rather than half-decoded. */
function pickDecoder(header: string | undefined): (() => Transform) | null {
  if (header === undefined) return null;
  const codings = (header ?? '').toLowerCase().split(',').map((c) => c.trim()).filter((c) => c !== '' && c !== 'identity');
  const coding = codings[0] ?? 'identity';
  const decoder = DECODERS[coding];
  if (codings.length > 1 || decoder === undefined) {
    throw new ApiError('ERR_UNSUPPORTED_ENCODING', `Content-Encoding ${header ?? ''} is not supported; use gzip, deflate, br or identity.`);
  }
  return decoder;
}

/**
 * Reads the body, counting wire bytes against `requestBytes` (chunked bodies have no
 * Content-Length to check up front) and decoded bytes against `decodedBytes`. Decoding is
 * streamed and stops at the limit, so a gzip bomb costs at most `decodedBytes` of memory.
 */
function readRaw(req: IncomingMessage, makeDecoder: (() => Transform) | null, limits: Limits): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const decoder = makeDecoder ? makeDecoder() : null;
    const chunks: Buffer[] = [];
    let wire = 0;
    let size = 0;
    let settled = false;

    const settle = (err?: ApiError): void => {
      if (settled) return;
      settled = true;
      req.off('data', onWire).off('end', onWireEnd).off('error', onAbort).off('close', onClose);
      if (decoder) decoder.removeAllListeners().on('error', () => undefined).destroy();
      if (err) {
        // Stop pulling bytes we will not read; the caller answers with Connection: close.
        req.pause();
        reject(err);
      } else resolve(Buffer.concat(chunks, size));
    };
    const onDecoded = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limits.decodedBytes) return settle(new ApiError('ERR_PAYLOAD_TOO_LARGE', `The decoded body is larger than ${limits.decodedBytes} bytes.`));
      chunks.push(chunk);
    };
    const onWire = (chunk: Buffer): void => {
      wire += chunk.length;
      if (wire > limits.requestBytes) return settle(new ApiError('ERR_PAYLOAD_TOO_LARGE', `The body is larger than ${limits.requestBytes} bytes.`));
      if (!decoder) return onDecoded(chunk);
      if (!decoder.write(chunk)) {
        req.pause();
        decoder.once('drain', () => req.resume());
      }
    };
    const onWireEnd = (): void => (decoder ? void decoder.end() : settle());
    const onAbort = (): void => settle(new ApiError('ERR_MALFORMED_BODY', 'The request body ended early.'));
    // 'close' also follows a normal 'end'; only an incomplete message is an abort.
    const onClose = (): void => {
      if (!req.complete) onAbort();
    };

    if (decoder) {
      decoder.on('data', onDecoded);
      decoder.on('end', () => settle());
      decoder.on('error', (err: Error) => settle(new ApiError('ERR_MALFORMED_ENCODING', `The body is not valid for its Content-Encoding: ${err.message}.`)));
    }
    req.on('data', onWire).on('end', onWireEnd).on('error', onAbort).on('close', onClose);
  });
}

/** A refused body up to this many times LIMIT_REQUEST_BYTES is read to its end and dropped… */
const DRAIN_FACTOR = 4;
/** …if it arrives within this long. */
const DRAIN_MS = 5000;

/**
 * Refuses the request, and reads and drops what is left of its body, so that a client still
 * sending it reads the answer: closing a socket with unread bytes makes the kernel send a reset,
 * and the client sees ECONNRESET or EPIPE instead of its 413. A body declared or found larger
 * than DRAIN_FACTOR × the limit is not worth reading: the answer goes with Connection: close.
 */
async function refuse(ctx: IngestContext, err: ApiError, limits: Limits): Promise<never> {
  const req = ctx.req;
  const cap = DRAIN_FACTOR * limits.requestBytes;
  if (req.complete || Number(req.headers['content-length'] ?? 0) > cap || !(await drained(req, cap))) ctx.set('Connection', 'close');
  throw err;
}

/** Reads the rest of the body and drops it; false when it went past `cap` bytes or DRAIN_MS. */
function drained(req: IncomingMessage, cap: number): Promise<boolean> {
  return new Promise((resolve) => {
    let dropped = 0;
    const done = (ok: boolean) => {
      clearTimeout(timer);
      req.off('data', onData).off('end', onEnd).off('close', onEnd);
      if (!ok) req.pause();
      resolve(ok);
    };
    const onData = (chunk: Buffer) => {
      dropped += chunk.length;
      if (dropped > cap) done(false);
    };
    const onEnd = () => done(req.complete);
    const timer = setTimeout(() => done(false), DRAIN_MS);
    req.on('data', onData).on('end', onEnd).on('close', onEnd);
    req.resume();
  });
}

/**
 * Reads a POST body within the limits and parses it to `ctx.state.body`. Bodies are parsed as
 * JSON keeping every integer's digits (`parseExactJson`; `__proto__` stays an own key) or by
 * URLSearchParams (flat strings).
 * Without a Content-Type (sendBeacon with an untyped Blob) the body is read as JSON text; a form
 * that is really JSON is read as JSON (body-shape.ts).
 */
export function createReadBody(limits: Limits): Middleware<IngestState> {
  return async (ctx, next) => {
    if (ctx.method !== 'POST' || !hasBody(ctx.req)) {
      ctx.state.body = { kind: 'none' };
      return next();
    }
    const { raw, isForm } = await readBodyBytes(ctx, limits);
    ctx.state.body = parseV3BodyText(utf8Text(raw), isForm, ctx.req.headers['content-type']);
    return next();
  };
}

/**
 * A POST body's bytes, decoded and within the limits, and whether it is a form. For senders
 * whose signature covers the exact bytes (webhooks), and for the parser above.
 */
export async function readBodyBytes(ctx: IngestContext, limits: Limits): Promise<{ raw: Buffer; isForm: boolean }> {
  const req = ctx.req;
  if (!hasBody(req)) return { raw: Buffer.alloc(0), isForm: false };
  if (Number(req.headers['content-length'] ?? 0) > limits.requestBytes) {
    return refuse(ctx, new ApiError('ERR_PAYLOAD_TOO_LARGE', `The body is larger than ${limits.requestBytes} bytes.`), limits);
  }
  let makeDecoder: (() => Transform) | null;
  try {
    makeDecoder = pickDecoder(req.headers['content-encoding']);
  } catch (err) {
    return refuse(ctx, err as ApiError, limits);
  }
  const contentType = req.headers['content-type'];
  const plainJson = !contentType || PLAIN_JSON.has(contentType);
  const isForm = !plainJson && ctx.is(FORM_TYPE) !== false;
  if (!plainJson && ((!isForm && ctx.is(JSON_TYPES) === false) || !CHARSETS.has(ctx.request.charset.toLowerCase()))) {
    return refuse(ctx, new ApiError('ERR_UNSUPPORTED_MEDIA_TYPE', `Content-Type ${req.headers['content-type']} is not supported; send UTF-8 application/json, text/plain or application/x-www-form-urlencoded.`), limits);
  }
  let raw: Buffer;
  try {
    raw = await readRaw(req, makeDecoder, limits);
  } catch (err) {
    return refuse(ctx, err as ApiError, limits);
  }
  // A chunked body has no Content-Length: the request history counts what was read.
  ctx.state.bodyBytes = raw.length;
  return { raw, isForm };
}

/** A body's text as its Content-Type says, with no second guessing: what webhook senders get. */
export function parseBodyText(raw: Buffer, isForm: boolean): ParsedBody {
  const text = utf8Text(raw);
  if (isForm) return text.length === 0 ? { kind: 'none' } : { kind: 'form', value: flatParams(new URLSearchParams(text)) };
  if (text.trim().length === 0) return { kind: 'none' };
  try {
    return { kind: 'json', value: parseExactJson(text) };
  } catch (err) {
    throw new ApiError('ERR_MALFORMED_JSON', `The body is not valid JSON: ${(err as Error).message}`);
  }
}
