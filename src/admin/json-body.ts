import type { Context } from 'koa';
import type * as z from 'zod';
import { ApiError } from '../core/errors';
import { describeIssues } from '../core/trackers/types';

/** Admin bodies are small (a tracker, a destination's settings, a list of entry ids); 64 KiB is plenty. Default. */
export const ADMIN_BODY_LIMIT = 64 * 1024;

async function readText(ctx: Context, limit: number): Promise<string> {
  const declared = Number(ctx.get('Content-Length') || 0);
  if (declared > limit) throw tooLarge(ctx, limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    // A chunked body has no Content-Length to check up front.
    if (size > limit) throw tooLarge(ctx, limit);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

function tooLarge(ctx: Context, limit: number): ApiError {
  // The rest of the body is not read; the connection cannot carry another request after it.
  ctx.set('Connection', 'close');
  return new ApiError('ERR_PAYLOAD_TOO_LARGE', `An admin request body is at most ${limit} bytes.`);
}

/** The body as a JSON object; no body at all reads as `{}`, so `POST …/replay` needs none. */
export async function readJsonObject(ctx: Context, limit = ADMIN_BODY_LIMIT): Promise<Record<string, unknown>> {
  if (!ctx.request.length && ctx.get('Transfer-Encoding') === '') return {};
  if (!ctx.is('application/json')) throw new ApiError('ERR_UNSUPPORTED_MEDIA_TYPE', 'Admin request bodies are JSON: send Content-Type: application/json.');
  const text = await readText(ctx, limit);
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ApiError('ERR_MALFORMED_JSON', `The body is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ApiError('ERR_ADMIN_INVALID', 'The body must be a JSON object.');
  return value as Record<string, unknown>;
}

/** Checks a value against a schema; the first offending path becomes `field`. */
export function parseInput<T>(schema: z.ZodType<T>, input: unknown, prefix = ''): T {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const first = parsed.error.issues[0];
  const path = first ? [...first.path, ...(first.code === 'unrecognized_keys' ? first.keys.slice(0, 1) : [])] : [];
  const field = [prefix, ...path.map(String)].filter(Boolean).join('.');
  throw new ApiError('ERR_ADMIN_INVALID', describeIssues(parsed.error, prefix), field || undefined);
}

/** Reads and checks the body in one step. */
export async function readBody<T>(ctx: Context, schema: z.ZodType<T>): Promise<T> {
  return parseInput(schema, await readJsonObject(ctx));
}
