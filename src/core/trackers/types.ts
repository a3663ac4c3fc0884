import * as z from 'zod';
import { MAX_PARTITIONS } from '../redis/keyspace';
import { isValidTimeZone } from '../records/event-time';
import { PrivacyRulesSchema, PrivacySecretSchema } from './privacy-rules';
import { DestinationRulesSchema } from '../rules/schema';

/** Generated tokens are 32 random bytes; declared ones must carry at least 128 bits' worth of base64url. */
export const TOKEN_PATTERN = /^[A-Za-z0-9_-]{22,200}$/;

export const TrackerTokenSchema = z.object({
  token: z.string().regex(TOKEN_PATTERN, 'a token is 22 to 200 characters of A-Z, a-z, 0-9, _ and - (at least 128 bits)'),
  createdAt: z.string().default(() => new Date().toISOString()),
  revokedAt: z.string().optional(),
});

/** Days a tracker's archive keeps unless told otherwise (docs/history.md). */
export const DEFAULT_ARCHIVE_DAYS = 30;

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
  /** Which records this destination receives and in what shape (src/core/rules); none: every record as accepted. */
  rules: DestinationRulesSchema.optional(),
});

/** The SaaS a webhook source verifies and maps like; `hmac` is any other sender that signs with an HMAC. */
export const SOURCE_TYPES = ['github', 'stripe', 'shopify', 'slack', 'standard-webhooks', 'hmac'] as const;
export type SourceType = (typeof SOURCE_TYPES)[number];

/** Where a reserved field of a webhook record comes from: a header or a JSON pointer into the body, after a literal prefix. */
export const MappingRuleSchema = z
  .object({
    header: z.string().min(1).optional(),
    /** RFC 6901, e.g. `/data/object/customer`. */
    pointer: z.string().regex(/^(\/[^/]*)*$/, 'a JSON pointer starts with / (e.g. /data/object/id), or is empty for the whole body').optional(),
    /** Text put before the value, or the whole value when neither header nor pointer is given. */
    prefix: z.string().default(''),
  })
  .strict()
  .refine((r) => !(r.header !== undefined && r.pointer !== undefined), 'a rule takes a header or a pointer, not both');

export const SourceMappingSchema = z
  .object({ _event: MappingRuleSchema.optional(), _id: MappingRuleSchema.optional(), _uid: MappingRuleSchema.optional(), _sid: MappingRuleSchema.optional(), _event_at: MappingRuleSchema.optional() })
  .strict();

/** How a generic `hmac` source signs: which header, which hash, which text. */
export const HmacSettingsSchema = z
  .object({
    header: z.string().min(1),
    algorithm: z.enum(['sha1', 'sha256', 'sha512']).default('sha256'),
    encoding: z.enum(['hex', 'base64']).default('hex'),
    /** Text before the signature in the header, e.g. `sha256=`. */
    signaturePrefix: z.string().default(''),
    /** A header holding the send time (Unix seconds): the signed text is then `<timestamp>.<body>`. */
    timestampHeader: z.string().min(1).optional(),
    toleranceSeconds: z.number().int().positive().default(300),
  })
  .strict();

export const WebhookSourceSchema = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'a source id is lowercase letters, digits, _ and -'),
    type: z.enum(SOURCE_TYPES),
    secret: z.string().min(8, 'a signing secret has at least 8 characters'),
    /** The secret before the last rotation, still accepted until `previousSecretUntil`. */
    previousSecret: z.string().optional(),
    previousSecretUntil: z.string().optional(),
    hmac: HmacSettingsSchema.optional(),
    mapping: SourceMappingSchema.default({}),
    createdAt: z.string().default(() => new Date().toISOString()),
  })
  .strict()
  .refine((s) => s.type !== 'hmac' || s.hmac !== undefined, { message: 'an hmac source needs hmac settings (at least the signature header)', path: ['hmac'] });

export type MappingRule = z.infer<typeof MappingRuleSchema>;
export type SourceMapping = z.infer<typeof SourceMappingSchema>;
export type HmacSettings = z.infer<typeof HmacSettingsSchema>;
export type WebhookSource = z.infer<typeof WebhookSourceSchema>;

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
  /**
   * Partitions the tracker's records are spread over by their key (`_uid` for users, `_sid` for
   * sessions, `_uid`/`_sid`/`_id` for events; src/core/redis/keyspace.ts): each is routed and
   * delivered on its own, in parallel with the others, with updates of one key in the order they
   * were accepted. For a tracker whose traffic outgrows one routing step or one destination writer.
   */
  partitions: z.number().int().min(1).max(MAX_PARTITIONS).default(1),
  /**
   * Days of accepted records kept in the tracker's archive (jobs/history/archiver.ts), from which history
   * is sent again to a destination (backfill, replay). 0 keeps no archive. Default 30.
   */
  archiveDays: z.number().int().min(0).max(3650).default(DEFAULT_ARCHIVE_DAYS),
  /** Text with a lone UTF-16 surrogate: refuse the record with a 400 naming the field, or store U+FFFD. */
  invalidUnicode: z.enum(['reject', 'replace']).default('reject'),
  destinations: z.array(DestinationSchema).default([]),
  /** Webhook senders with their own URL and signing secret (see src/ingest/webhooks). */
  sources: z.array(WebhookSourceSchema).default([]),
  /** Personal-data rules, applied to every record at the ingest edge before it reaches Redis (privacy-rules.ts). */
  privacyRules: PrivacyRulesSchema.default([]),
  /**
   * The HMAC key of the `hash` rules. Generated when the tracker is first stored with a `hash`
   * rule and kept for ever after: changing it changes every hash, and joins with older data break.
   */
  privacySecret: PrivacySecretSchema.optional(),
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
