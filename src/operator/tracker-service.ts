import { randomBytes } from 'node:crypto';
import * as z from 'zod';
import type { StoredTrackers, TrackerStore } from '../core/trackers/store';
import { generatePrivacySecret, PrivacyRuleSchema, PrivacyRulesSchema, type PrivacyRule } from '../core/trackers/privacy-rules';
import { generateToken, tokensEqual } from '../core/trackers/tokens';
import { activeTokens, describeIssues, RateLimitSchema, TrackerSchema, type Tracker, type TrackerToken } from '../core/trackers/types';

export type TrackerServiceErrorCode = 'TRACKER_NOT_FOUND' | 'RULE_NOT_FOUND' | 'TOKEN_NOT_FOUND' | 'TOKEN_AMBIGUOUS' | 'LAST_TOKEN' | 'INVALID_INPUT' | 'ID_TAKEN';

/** A refusal the caller can show as-is; `field` names the offending input when there is one. */
export class TrackerServiceError extends Error {
  override name = 'TrackerServiceError';
  constructor(
    readonly code: TrackerServiceErrorCode,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

const isOrigin = (o: string): boolean => o === '*' || (URL.canParse(o) && new URL(o).origin === o);

/**
 * The API edge compares the Origin header to these strings exactly, so a trailing slash or a
 * path would silently never match: refuse them here.
 */
const OriginSchema = z.string().refine(isOrigin, 'an origin is * or scheme://host[:port] with no path or trailing slash, e.g. https://shop.example');

/** Shapes and unknown keys are checked here; the tracker rules (id pattern, IANA zone…) by TrackerSchema. */
export const CreateTrackerInputSchema = z
  .object({
    name: z.string().trim(),
    id: z.string().optional(),
    timeZone: z.string().optional(),
    corsOrigins: z.array(OriginSchema).optional(),
    /** Null means no limit. */
    rateLimit: RateLimitSchema.nullable().optional(),
    captureContext: z.boolean().optional(),
    /** Hours client keys are remembered; 0 turns deduplication off. */
    dedupWindowHours: z.number().optional(),
    /** Partitions records are spread over by key; it can grow, never shrink. */
    partitions: z.number().optional(),
    /** Days of accepted records the archive keeps (backfill, replay); 0 keeps none. */
    archiveDays: z.number().optional(),
    invalidUnicode: z.enum(['reject', 'replace']).optional(),
    /** Personal-data rules; replaces the list. Each refusal names the rule by its index. */
    privacyRules: PrivacyRulesSchema.optional(),
  })
  .strict();

export const UpdateTrackerInputSchema = CreateTrackerInputSchema.omit({ id: true }).partial().strict();

export type CreateTrackerInput = z.input<typeof CreateTrackerInputSchema>;
export type UpdateTrackerInput = z.input<typeof UpdateTrackerInputSchema>;

export interface TrackerWithToken {
  tracker: Tracker;
  token: string;
}

export interface RevokeResult {
  tracker: Tracker;
  revoked: TrackerToken;
  /** The token was revoked before this call; nothing changed. */
  alreadyRevoked: boolean;
}

/** Shortest token prefix accepted by revokeToken, so a typo cannot pick a token by accident. */
export const MIN_TOKEN_PREFIX = 8;

/** A tracker id derived from a display name: `My Shop (EU)` → `my-shop-eu`. */
export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+/, '')
    .slice(0, 56)
    .replace(/-+$/, '');
  return slug || 'tracker';
}

function parse<T>(schema: z.ZodType<T>, input: unknown): T {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const first = parsed.error.issues[0];
  // An unknown key is reported at the parent's path; the key itself is the field to fix.
  const path = first ? [...first.path, ...(first.code === 'unrecognized_keys' ? first.keys.slice(0, 1) : [])] : [];
  const field = path.map(String).join('.');
  throw new TrackerServiceError('INVALID_INPUT', describeIssues(parsed.error), field || undefined);
}

/**
 * Tracker management shared by the CLI, the admin console and its JSON API.
 * Mutations of one tracker are serialized within this process; two processes editing the same
 * tracker at the same moment can still lose one write, since the store has no compare-and-set.
 */
export class TrackerService {
  constructor(
    private readonly store: TrackerStore,
    private readonly now: () => number = Date.now,
  ) {}

  private isoNow(): string {
    return new Date(this.now()).toISOString();
  }

  async createTracker(input: CreateTrackerInput): Promise<TrackerWithToken> {
    const fields = parse(CreateTrackerInputSchema, input);
    const token = generateToken();
    const createdAt = this.isoNow();
    const secret = fields.privacyRules?.some((r) => r.action === 'hash') ? { privacySecret: generatePrivacySecret() } : {};
    const build = (id: string): Tracker => parse(TrackerSchema, { ...fields, ...secret, id, tokens: [{ token, createdAt }], createdAt });

    if (fields.id !== undefined) {
      const tracker = build(fields.id);
      if (!(await this.store.create(tracker))) throw new TrackerServiceError('ID_TAKEN', `Tracker id "${fields.id}" is taken.`, 'id');
      return { tracker, token };
    }
    const base = slugify(fields.name);
    for (let n = 1; n <= 20; n++) {
      const tracker = build(n === 1 ? base : `${base}-${n}`);
      if (await this.store.create(tracker)) return { tracker, token };
    }
    const tracker = build(`${base}-${randomBytes(3).toString('hex')}`);
    if (await this.store.create(tracker)) return { tracker, token };
    throw new TrackerServiceError('ID_TAKEN', `No free tracker id near "${base}"; pass an id.`, 'id');
  }

  /** Every tracker; those this process cannot read are listed apart, with why (UnreadableTracker). */
  listTrackers(): Promise<StoredTrackers> {
    return this.store.list();
  }

  async getTracker(id: string): Promise<Tracker> {
    // An id that could never have been created is not worth a Redis key lookup built from it.
    const tracker = TrackerSchema.shape.id.safeParse(id).success ? await this.store.get(id) : undefined;
    if (!tracker) throw new TrackerServiceError('TRACKER_NOT_FOUND', `No tracker with id "${id}".`, 'id');
    return tracker;
  }

  async updateTracker(id: string, input: UpdateTrackerInput): Promise<Tracker> {
    const patch = parse(UpdateTrackerInputSchema, input);
    return this.mutate(id, async (tracker) => {
      // An explicit `undefined` means "unchanged"; spreading it would reset the field to its default.
      const next: Tracker = { ...tracker };
      if (patch.name !== undefined) next.name = patch.name;
      if (patch.timeZone !== undefined) next.timeZone = patch.timeZone;
      if (patch.corsOrigins !== undefined) next.corsOrigins = patch.corsOrigins;
      if (patch.rateLimit !== undefined) next.rateLimit = patch.rateLimit;
      if (patch.captureContext !== undefined) next.captureContext = patch.captureContext;
      if (patch.dedupWindowHours !== undefined) next.dedupWindowHours = patch.dedupWindowHours;
      if (patch.partitions !== undefined) {
        // Records queued in a partition are delivered by that partition's loop: one that went away would strand them.
        if (patch.partitions < tracker.partitions) throw new TrackerServiceError('INVALID_INPUT', `Partitions can grow but not shrink: tracker "${tracker.id}" has ${tracker.partitions}, and records queued in the partitions past ${patch.partitions} would never be delivered.`, 'partitions');
        next.partitions = patch.partitions;
      }
      if (patch.archiveDays !== undefined) next.archiveDays = patch.archiveDays;
      if (patch.invalidUnicode !== undefined) next.invalidUnicode = patch.invalidUnicode;
      if (patch.privacyRules !== undefined) next.privacyRules = patch.privacyRules;
      return parse(TrackerSchema, next);
    });
  }

  /** Adds a personal-data rule, or changes the action of the rule already naming that property. */
  async setPrivacyRule(id: string, rule: PrivacyRule): Promise<Tracker> {
    const valid = parse(PrivacyRuleSchema, rule);
    return this.mutate(id, async (tracker) => {
      const at = tracker.privacyRules.findIndex((r) => r.property === valid.property);
      const rules = at < 0 ? [...tracker.privacyRules, valid] : tracker.privacyRules.map((r, i) => (i === at ? valid : r));
      return parse(TrackerSchema, { ...tracker, privacyRules: rules });
    });
  }

  /** Removes the rule naming `property`, as it was written (`email`, `/address/email`). */
  async removePrivacyRule(id: string, property: string): Promise<Tracker> {
    return this.mutate(id, async (tracker) => {
      if (!tracker.privacyRules.some((r) => r.property === property)) {
        throw new TrackerServiceError('RULE_NOT_FOUND', `Tracker "${tracker.id}" has no personal-data rule for ${property}.`, 'property');
      }
      return { ...tracker, privacyRules: tracker.privacyRules.filter((r) => r.property !== property) };
    });
  }

  /** Adds a token; the old ones keep working until they are revoked. */
  async rotateToken(id: string): Promise<TrackerWithToken> {
    const token = generateToken();
    const tracker = await this.mutate(id, async (t) => ({ ...t, tokens: [...t.tokens, { token, createdAt: this.isoNow() }] }));
    return { tracker, token };
  }

  /** Revokes by the whole token or a unique prefix of at least MIN_TOKEN_PREFIX characters. */
  async revokeToken(id: string, tokenOrPrefix: string): Promise<RevokeResult> {
    const wanted = tokenOrPrefix.trim();
    let result: Omit<RevokeResult, 'tracker'> | undefined;
    const tracker = await this.mutate(id, async (t) => {
      const target = findToken(t, wanted);
      if (target.revokedAt) {
        result = { revoked: target, alreadyRevoked: true };
        return t;
      }
      if (activeTokens(t).length === 1) {
        throw new TrackerServiceError('LAST_TOKEN', `That is the last active token of tracker "${t.id}"; run rotate-token first, move clients to the new token, then revoke this one.`, 'token');
      }
      const revoked = { ...target, revokedAt: this.isoNow() };
      result = { revoked, alreadyRevoked: false };
      return { ...t, tokens: t.tokens.map((tok) => (tok === target ? revoked : tok)) };
    });
    return { tracker, ...result! };
  }

  /** Read-change-write through the store's compare-and-set: safe across processes, not only within this one. */
  private async mutate(id: string, change: (tracker: Tracker) => Promise<Tracker>): Promise<Tracker> {
    await this.getTracker(id);
    const updated = await this.store.update(id, change);
    if (!updated) return this.getTracker(id);
    return updated;
  }
}

function findToken(tracker: Tracker, wanted: string): TrackerToken {
  const exact = tracker.tokens.find((t) => tokensEqual(t.token, wanted));
  if (exact) return exact;
  if (wanted.length < MIN_TOKEN_PREFIX) {
    throw new TrackerServiceError('INVALID_INPUT', `Give the whole token or at least ${MIN_TOKEN_PREFIX} characters of it.`, 'token');
  }
  const matches = tracker.tokens.filter((t) => t.token.startsWith(wanted));
  const active = matches.filter((t) => !t.revokedAt);
  if (active.length > 1) throw new TrackerServiceError('TOKEN_AMBIGUOUS', `"${wanted}" starts ${active.length} active tokens of tracker "${tracker.id}"; give more of it.`, 'token');
  const found = active[0] ?? matches[0];
  if (!found) throw new TrackerServiceError('TOKEN_NOT_FOUND', `Tracker "${tracker.id}" has no token starting with "${wanted}".`, 'token');
  return found;
}
