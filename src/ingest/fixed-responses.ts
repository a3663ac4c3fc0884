import type { FixedResponse, HttpContext } from '../core/requests/request-state';

/**
 * A transparent 1×1 GIF89a (43 bytes). The popular 42-byte variant cuts its LZW data one bit
 * short of the end code; this one carries clear, pixel 0 and end in full, so strict decoders accept it.
 */
export const PIXEL_GIF = Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64');

export type { FixedResponse };

export const FIXED_SUFFIXES: Readonly<Record<FixedResponse, string>> = { gif: 'tracker.gif', js: 'tracker.js' };

/** Sends the pixel or the empty script. A pixel never shows JSON, whatever the status. */
export function sendFixed(ctx: HttpContext, kind: FixedResponse, status: number): void {
  ctx.status = status;
  ctx.set('Cache-Control', 'no-store');
  if (kind === 'gif') {
    ctx.type = 'image/gif';
    ctx.body = PIXEL_GIF;
  } else {
    ctx.type = 'application/javascript';
    ctx.body = '';
    // Koa turns an empty body into 204 with no type; keep the script's headers.
    ctx.status = status;
    ctx.type = 'application/javascript';
    ctx.length = 0;
  }
}
