import type { Context } from 'koa';

/** The smallest valid transparent 1×1 GIF (GIF89a, one transparent palette entry). */
export const PIXEL_GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

export type FixedResponse = 'gif' | 'js';

export const FIXED_SUFFIXES: Readonly<Record<FixedResponse, string>> = { gif: 'tracker.gif', js: 'tracker.js' };

/** Sends the pixel or the empty script. A pixel never shows JSON, whatever the status. */
export function sendFixed(ctx: Context, kind: FixedResponse, status: number): void {
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
