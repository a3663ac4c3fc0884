import type { Duplex } from 'node:stream';
import { ApiError, type ErrorCode } from '../core/errors';
import { ERROR_HEADER } from './error-handler';

/** How long a refused client may go on sending before its connection is closed anyway. */
const DRAIN_MS = 5000;

const REASONS: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 414: 'URI Too Long', 431: 'Request Header Fields Too Large' };

type ParserError = NodeJS.ErrnoException & { rawPacket?: Buffer; bytesParsed?: number };

/**
 * Whether the overflow was in the request line. Node hands over only the packet in which the limit
 * was passed, not the request's start, so this reads the shape of the packet's first line: the
 * tail of a request line is a URL without spaces ending in ` HTTP/1.x` (a header line has a
 * colon and spaces); a packet without any line end or space is taken for the middle of a URL.
 */
function inRequestLine(err: ParserError): boolean {
  const raw = err.rawPacket;
  if (!raw) return false;
  const eol = raw.indexOf('\r\n');
  const first = raw.subarray(0, eol < 0 ? raw.length : eol).toString('latin1');
  const url = first.replace(/^[A-Z]+ /, '');
  if (eol < 0) return !url.includes(' ');
  return /^[^ ]* HTTP\/1\.[01]$/.test(url);
}

function codeOf(err: ParserError): ErrorCode {
  if (err.code === 'HPE_HEADER_OVERFLOW') return inRequestLine(err) ? 'ERR_URI_TOO_LONG' : 'ERR_HEADERS_TOO_LARGE';
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'ERR_REQUEST_TIMEOUT';
  return 'ERR_BAD_REQUEST';
}

/**
 * Node's `clientError`: a request its HTTP parser refused (a URL or headers over the limit,
 * broken syntax) gets a JSON answer like every other error rather than a bare status or a reset.
 * The answer is written, the connection half-closed, and what the client still sends is read and
 * dropped for a few seconds, so that it reads the status instead of an ECONNRESET.
 */
export function answerClientError(err: ParserError, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || err.code === 'EPIPE' || !socket.writable) {
    socket.destroy();
    return;
  }
  const error = new ApiError(codeOf(err));
  const body = JSON.stringify({ error: error.toBody() });
  socket.end(
    `HTTP/1.1 ${error.status} ${REASONS[error.status] ?? 'Bad Request'}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${ERROR_HEADER}: ${error.code}\r\nConnection: close\r\n\r\n${body}`,
  );
  socket.on('data', () => undefined);
  socket.on('error', () => undefined);
  socket.resume();
  const timer = setTimeout(() => socket.destroy(), DRAIN_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}
