import { randomBytes } from 'node:crypto';
import * as z from 'zod';
import type { SourceDelivery, SourceDeliveryLog } from '../core/trackers/source-deliveries';
import type { TrackerStore } from '../core/trackers/store';
import { describeIssues, HmacSettingsSchema, SOURCE_TYPES, SourceMappingSchema, WebhookSourceSchema, type SourceType, type Tracker, type WebhookSource } from '../core/trackers/types';

export type SourceServiceErrorCode = 'TRACKER_NOT_FOUND' | 'SOURCE_NOT_FOUND' | 'SOURCE_EXISTS' | 'INVALID_INPUT';

/** A refusal the caller can show as-is; `field` names the offending input when there is one. */
export class SourceServiceError extends Error {
  override name = 'SourceServiceError';
  constructor(
    readonly code: SourceServiceErrorCode,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

/**
 * Who makes the signing secret. GitHub, Standard Webhooks senders and generic HMAC senders take
 * the secret you give them, so one is generated when none is given; Stripe, Shopify and Slack
 * issue their own, which must be copied from their dashboards.
 */
const ISSUED_BY_PROVIDER: Partial<Record<SourceType, string>> = {
  stripe: 'Stripe issues the signing secret: copy it from Developers → Webhooks → your endpoint (whsec_…) and give it as the secret (--secret)',
  shopify: 'Shopify signs with your app’s client secret (or the secret shown under Settings → Notifications → Webhooks): give it as the secret (--secret)',
  slack: 'Slack signs with your app’s Signing Secret (Basic Information → App Credentials): give it as the secret (--secret)',
};

/** Standard Webhooks secrets are `whsec_` + base64 of 24 to 64 random bytes; the others are any strong text. */
function generateSecret(type: SourceType): string {
  const bytes = randomBytes(32);
  return type === 'standard-webhooks' ? `whsec_${bytes.toString('base64')}` : bytes.toString('base64url');
}

export const AddSourceInputSchema = z
  .object({
    type: z.enum(SOURCE_TYPES),
    id: z.string().optional(),
    secret: z.string().optional(),
    hmac: HmacSettingsSchema.optional(),
    mapping: SourceMappingSchema.optional(),
  })
  .strict();
export type AddSourceInput = z.input<typeof AddSourceInputSchema>;

/** How long the previous secret keeps working after a rotation, by default: a day to update the sender. */
export const DEFAULT_ROTATION_GRACE_HOURS = 24;

function parse<T>(schema: z.ZodType<T>, input: unknown): T {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const first = parsed.error.issues[0];
  throw new SourceServiceError('INVALID_INPUT', describeIssues(parsed.error), first?.path.map(String).join('.') || undefined);
}

/** Webhook sources of trackers: add, list, rotate the secret, change the mapping, remove. */
export class SourceService {
  constructor(
    private readonly store: TrackerStore,
    private readonly now: () => Date = () => new Date(),
    /** The sources' last deliveries; without it, none are read and removing a source leaves its log. */
    private readonly log?: SourceDeliveryLog,
  ) {}

  async list(trackerId: string): Promise<WebhookSource[]> {
    return (await this.tracker(trackerId)).sources;
  }

  async get(trackerId: string, sourceId: string): Promise<WebhookSource> {
    return this.find(await this.tracker(trackerId), sourceId);
  }

  async add(trackerId: string, input: AddSourceInput): Promise<WebhookSource> {
    const fields = parse(AddSourceInputSchema, input);
    const issuer = ISSUED_BY_PROVIDER[fields.type];
    if (!fields.secret && issuer) throw new SourceServiceError('INVALID_INPUT', issuer, 'secret');
    const source = parse(WebhookSourceSchema, {
      id: fields.id ?? fields.type,
      type: fields.type,
      secret: fields.secret ?? generateSecret(fields.type),
      ...(fields.hmac ? { hmac: fields.hmac } : {}),
      mapping: fields.mapping ?? {},
      createdAt: this.now().toISOString(),
    });
    await this.mutate(trackerId, (t) => {
      if (t.sources.some((s) => s.id === source.id)) throw new SourceServiceError('SOURCE_EXISTS', `Tracker "${t.id}" has a source "${source.id}" already; choose another id (--id).`, 'id');
      return { ...t, sources: [...t.sources, source] };
    });
    return source;
  }

  /**
   * A new secret (generated, or given for providers that issue their own); the previous one keeps
   * working for `graceHours`, so deliveries in flight and a sender not yet updated are not refused.
   */
  async rotateSecret(trackerId: string, sourceId: string, opts: { secret?: string; graceHours?: number } = {}): Promise<WebhookSource> {
    const grace = opts.graceHours ?? DEFAULT_ROTATION_GRACE_HOURS;
    if (!Number.isFinite(grace) || grace < 0) throw new SourceServiceError('INVALID_INPUT', 'The grace period is a number of hours ≥ 0.', 'graceHours');
    let rotated: WebhookSource | undefined;
    await this.mutate(trackerId, (t) => {
      const current = this.find(t, sourceId);
      const issuer = ISSUED_BY_PROVIDER[current.type];
      if (!opts.secret && issuer) throw new SourceServiceError('INVALID_INPUT', `${issuer.split(':')[0]}: roll it there first, then give the new one as the secret (--secret)`, 'secret');
      rotated = parse(WebhookSourceSchema, {
        ...current,
        secret: opts.secret ?? generateSecret(current.type),
        previousSecret: current.secret,
        previousSecretUntil: new Date(this.now().getTime() + grace * 3_600_000).toISOString(),
      });
      return { ...t, sources: t.sources.map((s) => (s.id === sourceId ? rotated! : s)) };
    });
    return rotated!;
  }

  async setMapping(trackerId: string, sourceId: string, mapping: unknown): Promise<WebhookSource> {
    const parsed = parse(SourceMappingSchema, mapping);
    let updated: WebhookSource | undefined;
    await this.mutate(trackerId, (t) => {
      updated = { ...this.find(t, sourceId), mapping: parsed };
      return { ...t, sources: t.sources.map((s) => (s.id === sourceId ? updated! : s)) };
    });
    return updated!;
  }

  /** A removed source's log goes with it, so a new source of the same id starts with none. */
  async remove(trackerId: string, sourceId: string): Promise<void> {
    await this.mutate(trackerId, (t) => {
      this.find(t, sourceId);
      return { ...t, sources: t.sources.filter((s) => s.id !== sourceId) };
    });
    await this.log?.clear(trackerId, sourceId);
  }

  /** The source's last deliveries with their verdicts, newest first. */
  async deliveries(trackerId: string, sourceId: string): Promise<SourceDelivery[]> {
    await this.get(trackerId, sourceId);
    return this.log ? this.log.list(trackerId, sourceId) : [];
  }

  private find(tracker: Tracker, sourceId: string): WebhookSource {
    const source = tracker.sources.find((s) => s.id === sourceId);
    if (!source) throw new SourceServiceError('SOURCE_NOT_FOUND', `Tracker "${tracker.id}" has no source "${sourceId}".`, 'source');
    return source;
  }

  private async tracker(id: string): Promise<Tracker> {
    const tracker = await this.store.get(id);
    if (!tracker) throw new SourceServiceError('TRACKER_NOT_FOUND', `No tracker with id "${id}".`, 'id');
    return tracker;
  }

  private async mutate(id: string, change: (t: Tracker) => Tracker): Promise<Tracker> {
    const updated = await this.store.update(id, change);
    if (!updated) throw new SourceServiceError('TRACKER_NOT_FOUND', `No tracker with id "${id}".`, 'id');
    return updated;
  }
}
