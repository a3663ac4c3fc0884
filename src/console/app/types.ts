/**
 * The shapes the admin API answers with, as the browser sees them. They mirror the server's types
 * (src/core/trackers/types.ts, src/operator/integration-view.ts, jobs/delivery/destination-status.ts,
 * jobs/delivery/dead-letters.ts) without importing them: the console is compiled on its own, for the browser.
 * test/console/wire-types.ts checks at type-check time that every server type still fits its mirror.
 */

export type RecordKind = 'user' | 'session' | 'event';
export const RECORD_KINDS: readonly RecordKind[] = ['user', 'session', 'event'];

export interface TrackerToken {
  token: string;
  createdAt: string;
  revokedAt?: string;
}

export interface RateLimit {
  /** Sustained records per second, per API process. */
  recordsPerSecond: number;
  /** Records that may arrive at once above the sustained rate; default one second's worth. */
  burst?: number;
}

export interface Destination {
  id: string;
  type: string;
  enabled: boolean;
  settings: Record<string, unknown>;
  rules?: DestinationRules;
}

/** What a tracker's archive holds (jobs/history/archive-status.ts). */
export interface ArchiveStatus {
  days: number;
  records: number;
  bytes: number;
  oldestDay: string | null;
  waiting: number;
  lastError: string | null;
  missingThrough: string | null;
  lastGap: string | null;
}

/** Which records a destination receives and in what shape (src/core/rules/schema.ts). */
export interface DestinationRules {
  filter?: string;
  sample?: { rate: number; by?: string };
  keep?: string[];
  drop?: string[];
  rename?: Record<string, string>;
  flatten?: true | { separator?: string; depth?: number };
}

/** What rules make of the tracker's last records (src/operator/rules-preview.ts). */
export interface RulesPreview {
  trackerId: string;
  destinationId?: string;
  rules: DestinationRules | null;
  counts: { examined: number; delivered: number; filtered: number; sampled: number; errors: number };
  records: Array<{ outcome: 'deliver' | 'filter' | 'sample' | 'error'; error?: string; record: PreviewRecord }>;
}

/** A record as the preview shows it: TrackedRecord's fields (src/core/records/types.ts). */
export interface PreviewRecord {
  kind: 'user' | 'session' | 'event';
  id: string;
  receivedAt: string;
  uid?: string;
  sid?: string;
  event?: string;
  properties: Record<string, unknown>;
}

export const PRIVACY_ACTIONS = ['drop', 'hash', 'truncate-ip', 'mask-email'] as const;
export type PrivacyAction = (typeof PRIVACY_ACTIONS)[number];

export interface PrivacyRule {
  property: string;
  action: PrivacyAction;
}

export interface PrivacyRuleView extends PrivacyRule {
  effect: string;
}

/** A stored tracker the relay cannot read (its secrets do not open, or its JSON is not a tracker). */
export interface UnreadableTracker {
  id: string;
  reason: string;
}

export interface Tracker {
  id: string;
  name: string;
  tokens: TrackerToken[];
  timeZone: string;
  corsOrigins: string[];
  rateLimit: RateLimit | null;
  captureContext: boolean;
  dedupWindowHours: number;
  partitions: number;
  archiveDays: number;
  destinations: Destination[];
  privacyRules: PrivacyRule[];
  /** Always `[redacted]` over the admin API. */
  privacySecret?: string;
  createdAt: string;
}

export interface EndpointView {
  kind: RecordKind;
  postUrl: string;
  getUrl: string;
  dataUrl: string;
  pixelUrl: string;
  scriptUrl: string;
  sample: Record<string, string>;
}

export interface CurlExample {
  kind: RecordKind;
  form: string;
  title: string;
  command: string;
}

export interface SdkSnippet {
  sdk: string;
  title: string;
  code: string;
  note?: string;
}

/** Segment's and RudderStack's SDKs pointed at the relay's /v1. */
export interface SegmentView {
  endpoint: string;
  writeKey: string;
  apiHost: string;
  snippets: SdkSnippet[];
}

export interface IntegrationView {
  trackerId: string;
  trackerName: string;
  baseUrl: string;
  token: string;
  authorizationHeader: string;
  endpoints: EndpointView[];
  curl: CurlExample[];
  pixelSnippet: string;
  sdkSnippet: string;
  sdkPinnedSnippet?: string;
  segment: SegmentView;
  privacyRules: PrivacyRuleView[];
}

export interface DestinationStatus {
  queued: number;
  /** Of the queued records, those in Redis and those in the worker's disk spool. */
  inRedis: number;
  spooled: number;
  spoolBytes: number;
  growthPerSecond: number;
  /** At the current growth, seconds until the Redis cap and the disk are reached; null when not growing. */
  fullInSeconds: { redisCap: number | null; disk: number | null };
  inFlight: number;
  delivered: number;
  batches: number;
  deadLettered: number;
  /** Records its rules kept from it. */
  skipped: { filter: number; sample: number; filterErrors: number };
  lastFilterError: string | null;
  lagMs: number;
  lastDeliveredAt: string | null;
  lastError: { kind: string; message: string; at: string } | null;
  paused: string | null;
  writingSince: string | null;
  attempts: number;
  retryAt: string | null;
  details: Record<string, string | number | boolean | null> | null;
}

export interface DestinationView extends Destination {
  status: DestinationStatus;
  /** Its backfill under way, or the last one. */
  backfill?: Backfill;
}

/** A destination's backfill (jobs/history/backfill.ts). */
export interface Backfill {
  id: string;
  state: 'running' | 'done' | 'cancelled';
  since: string;
  until: string;
  resources: string[];
  startedAt: string;
  finishedAt: string | null;
  read: number;
  readThrough: number | null;
  queued: number;
  /** Users and sessions sent as their merged state. */
  states: number;
  /** Records its history lane still holds. */
  waiting: number;
}

export interface TestResult {
  ok: boolean;
  notes?: string[];
  error?: { kind: string; message: string };
}

export interface TrackedRecord {
  kind: RecordKind;
  id: string;
  receivedAt: string;
  uid?: string;
  sid?: string;
  event?: string;
  eventAt?: string;
  properties: Record<string, unknown>;
  context?: { ip?: string; userAgent?: string; referer?: string };
}

export interface DeadLetter {
  entryId: string;
  record: TrackedRecord;
  error: { kind: string; message: string; status?: number };
  failedAt: string;
}

/** A JSON Schema (draft 2020-12) as zod's `z.toJSONSchema` writes it; only the parts the form reads. */
export interface JsonSchema {
  type?: string | string[];
  title?: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  format?: string;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  /** Words for each value of `enum`, where the connector gives them. */
  'x-enum-labels'?: Record<string, string>;
}

/** A first setup the console guides (connectors/types.ts `SetupGuide`). */
export interface SetupGuide {
  primary: Array<{ setting: string; label: string; hint: string }>;
  keySetting?: string;
  afterKey?: string;
  splits?: { setting: string; into: string[] };
  steps: Array<{ text: string; url?: string; code?: string }>;
}

export interface ConnectorInfo {
  type: string;
  description: string;
  settingsSchema: JsonSchema;
  setup?: SetupGuide;
}

export interface LiveEntry {
  at: string;
  kind: RecordKind | null;
  request: { method: string; path: string; query: Record<string, string>; contentType: string | null; origin: string | null; userAgent: string | null };
  response: { status: number; body: unknown; fixed: 'gif' | 'js' | null; errorCode: string | null };
  /** The stored records, as normalized (at most 100 per entry). */
  records: TrackedRecord[];
  /** How many records the request stored; more than `records.length` when the batch was cut. */
  recordCount?: number;
  duplicates?: number;
}

export interface QueryResult {
  columns: string[];
  rows: unknown[][];
  /** The query produced more rows than the answer carries (1 000). */
  truncated: boolean;
}

export type SourceType = 'github' | 'stripe' | 'shopify' | 'slack' | 'standard-webhooks' | 'hmac';
export const SOURCE_TYPES: readonly SourceType[] = ['github', 'stripe', 'shopify', 'slack', 'standard-webhooks', 'hmac'];

/** The reserved fields a webhook source can map. */
export type MappedField = '_event' | '_id' | '_uid' | '_sid' | '_event_at';
export const MAPPED_FIELDS: readonly MappedField[] = ['_event', '_id', '_uid', '_sid', '_event_at'];

/** A header or a JSON pointer into the body, after a literal prefix (the whole value when neither is given). */
export interface MappingRule {
  header?: string;
  pointer?: string;
  prefix: string;
}

export type SourceMapping = Partial<Record<MappedField, MappingRule>>;

export interface HmacSettings {
  header: string;
  algorithm: 'sha1' | 'sha256' | 'sha512';
  encoding: 'hex' | 'base64';
  signaturePrefix: string;
  timestampHeader?: string;
  toleranceSeconds: number;
}

/** A webhook source as the admin API shows it: its URL, and its secret only in the answer that made it (added, rotated), `[redacted]` in every other; the previous secret never. */
export interface SourceView {
  id: string;
  type: SourceType;
  secret: string;
  /** Until then, deliveries signed with the secret before the last rotation are accepted too. */
  previousSecretUntil?: string;
  hmac?: HmacSettings;
  mapping: SourceMapping;
  createdAt: string;
  url: string;
}

export interface SourceDelivery {
  at: string;
  verdict: 'accepted' | 'duplicate' | 'challenge' | 'refused';
  status: number;
  reason?: string;
  message?: string;
  event?: string;
  id?: string;
}

/** Redis memory against the relay's budget (GET /admin/api/health); see src/core/redis/memory-budget.ts. */
export interface MemorySnapshot {
  state: 'unknown' | 'unlimited' | 'ok' | 'warning' | 'full';
  usedBytes: number | null;
  limitBytes: number | null;
  limitSource: 'setting' | 'redis' | null;
  watermarks: { warnBytes: number; highBytes: number; resumeBytes: number } | null;
  policy: string | null;
  sampledAt: string | null;
}

/** Records of one endpoint and outcome, a count a minute (GET /admin/api/trackers/:id/traffic). */
export interface TrafficSeries {
  endpoint: string;
  /** `accepted`, `duplicate`, an `ERR_*` code, or `refused` past the per-minute cap. */
  outcome: string;
  total: number;
  counts: number[];
}

/** A tracker's last 24 hours, a point a minute, oldest first; see src/core/series/traffic.ts. */
export interface TrafficPicture {
  start: string;
  stepSeconds: number;
  totals: { accepted: number; duplicate: number; refused: number };
  series: TrafficSeries[];
}

export type DeliveryState = 'delivering' | 'failing' | 'paused' | 'disabled';

/** A change of a destination's state; `from` is empty on its first start. */
export interface DeliveryMarker {
  at: string;
  state: DeliveryState;
  from: DeliveryState | '';
  message?: string;
  /** The tracker partition whose delivery changed, when the tracker has several. */
  partition?: number;
}

/** A destination's last 24 hours (GET …/destinations/:dest/traffic); see jobs/delivery/destination-series.ts. */
export interface DestinationPicture {
  start: string;
  stepSeconds: number;
  delivered: number[];
  deadLettered: number[];
  /** Kept from it by its rules, and where its filter failed, per minute. */
  skipped: number[];
  filterErrors: number[];
  /** Null where no worker sampled it. */
  backlog: Array<number | null>;
  lagMs: Array<number | null>;
  totals: { delivered: number; deadLettered: number; skipped: number; filterErrors: number };
  /** Newest first. */
  markers: DeliveryMarker[];
}
