import { z } from 'zod';
import { isValidTimeZone } from '../records/event-time';

/** Generated tokens are 32 random bytes; declared ones must carry at least 128 bits' worth of base64url. */
export const TOKEN_PATTERN = /^[A-Za-z0-9_-]{22,200}$/;

export const TrackerTokenSchema = z.object({
  token: z.string().regex(TOKEN_PATTERN, 'a token is 22 to 200 characters of A-Z, a-z, 0-9, _ and - (at least 128 bits)'),
  createdAt: z.string().default(() => new Date().toISOString()),
  revokedAt: z.string().optional(),
});

/** The longest deduplication window a tracker may set: 7 days. */
export const MAX_DEDUP_WINDOW_HOURS = 168;

export const RateLimitSchema = z.object({
  /** Sustained records per second, per API process. */
  recordsPerSecond: z.number().positive(),
  /** Records that may arrive at once above the sustained rate. Default: one second's worth. */
  burst: z.number().int().positive().optional(),
});

export const DestinationSchema = z.object({
  id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'a destination id is lowercase letters, digits, _ and -'),
  type: z.string().min(1),
  enabled: z.boolean().default(true),
  settings: z.record(z.string(), z.unknown()).default({}),
});

export const TrackerSchema = z.object({
  id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'a tracker id is 1 to 63 lowercase letters, digits, _ and -, starting with a letter or digit'),
  name: z.string().min(1).max(200),
  tokens: z.array(TrackerTokenSchema).min(1, 'a tracker needs at least one token'),
  timeZone: z.string().default('UTC').refine(isValidTimeZone, 'not an IANA time zone (e.g. Europe/Paris)'),
  /** Origins allowed by CORS; `*` allows any. Requests without an Origin header (servers, webhooks) are never refused by it. */
  corsOrigins: z.array(z.string().min(1)).default(['*']),
  /** Null means no limit. */
  rateLimit: RateLimitSchema.nullable().default(null),
  /** Store the client IP, user agent and referer with each record. */
  captureContext: z.boolean().default(false),
  /**
   * Hours a client key (`_id`, `Idempotency-Key`) is remembered: a record whose key was accepted
   * within this window is answered but not queued again. 0 turns it off; at most 7 days.
   */
  dedupWindowHours: z.number().int().min(0).max(MAX_DEDUP_WINDOW_HOURS).default(24),
  destinations: z.array(DestinationSchema).default([]),
  createdAt: z.string().default(() => new Date().toISOString()),
});

export type TrackerToken = z.infer<typeof TrackerTokenSchema>;
export type RateLimit = z.infer<typeof RateLimitSchema>;
export type Destination = z.infer<typeof DestinationSchema>;
export type Tracker = z.infer<typeof TrackerSchema>;

/** Readable one-line summary of a zod failure, naming each bad field by its path. */
export function describeIssues(error: z.ZodError, prefix = ''): string {
  return error.issues.map((i) => `${[prefix, ...i.path.map(String)].filter(Boolean).join('.') || '(root)'}: ${i.message}`).join('; ');
}

export function activeTokens(tracker: Tracker): TrackerToken[] {
  return tracker.tokens.filter((t) => !t.revokedAt);
}
