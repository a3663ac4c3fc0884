import type { ArchiveStatus, Backfill, ConnectorInfo, DeadLetter, Destination, DestinationPicture, DestinationRules, DestinationView, HmacSettings, IntegrationView, MemorySnapshot, PrivacyRule, QueryResult, RateLimit, RulesPreview, SourceDelivery, SourceMapping, SourceType, SourceView, TestResult, Tracker, TrafficPicture, UnreadableTracker } from './types.js';

/** An answer other than 2xx, with the server's error code, message and offending field. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
    /** Seconds to wait, from Retry-After (a 429). */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

type Listener = () => void;
const unauthorizedListeners = new Set<Listener>();

/** Called whenever the session turns out to be gone (a 401 on any call), so the app can show the login form. */
export function onUnauthorized(listener: Listener): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

export function notifyUnauthorized(): void {
  for (const listener of unauthorizedListeners) listener();
}

const BASE = '/admin/api';

async function errorOf(res: Response): Promise<ApiError> {
  let code = `HTTP_${res.status}`;
  let message = `${res.status} ${res.statusText}`.trim();
  let field: string | undefined;
  try {
    const body = (await res.json()) as { error?: { code?: string; message?: string; field?: string } };
    if (body.error) {
      code = body.error.code ?? code;
      message = body.error.message ?? message;
      field = body.error.field;
    }
  } catch {
    // Not JSON (a proxy's error page): the status line is all there is.
  }
  const retryAfter = Number(res.headers.get('Retry-After') ?? NaN);
  return new ApiError(res.status, code, message, field, Number.isFinite(retryAfter) ? retryAfter : undefined);
}

export async function call<T>(method: string, path: string, body?: unknown, { quiet401 = false } = {}): Promise<T> {
  const init: RequestInit = { method, credentials: 'same-origin', headers: { Accept: 'application/json' } };
  if (body !== undefined) {
    init.headers = { ...init.headers, 'Content-Type': 'application/json' };
    init.body = JSON.stringify(body);
  }
  let res: Response;
  try {
    res = await fetch(BASE + path, init);
  } catch (err) {
    throw new ApiError(0, 'ERR_NETWORK', `The server could not be reached (${(err as Error).message}).`);
  }
  if (!res.ok) {
    const error = await errorOf(res);
    if (res.status === 401 && !quiet401) notifyUnauthorized();
    throw error;
  }
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

const seg = encodeURIComponent;
const tracker = (id: string) => `/trackers/${seg(id)}`;
const destination = (id: string, dest: string) => `${tracker(id)}/destinations/${seg(dest)}`;
const source = (id: string, src: string) => `${tracker(id)}/sources/${seg(src)}`;

export interface TrackerInput {
  name?: string;
  id?: string;
  timeZone?: string;
  corsOrigins?: string[];
  rateLimit?: RateLimit | null;
  captureContext?: boolean;
  dedupWindowHours?: number;
  partitions?: number;
  archiveDays?: number;
}

export const api = {
  trackers: {
    list: async () => (await call<{ trackers: Tracker[] }>('GET', '/trackers')).trackers,
    /** The trackers, and those the relay cannot read (with why), listed apart. */
    listAll: () => call<{ trackers: Tracker[]; unreadable: UnreadableTracker[] }>('GET', '/trackers'),
    create: (input: TrackerInput) => call<{ tracker: Tracker; token: string; integration: IntegrationView }>('POST', '/trackers', input),
    get: (id: string) => call<Tracker>('GET', tracker(id)),
    update: (id: string, input: TrackerInput) => call<Tracker>('PATCH', tracker(id), input),
    /** An admin's: what Redis holds for it is discarded (the answer says how much). */
    remove: (id: string) => call<{ removed: string; destinations: string[]; discarded: { queued: number; deadLetters: number; backlog: number }; revoked: { people: number; tokens: number } }>('DELETE', tracker(id)),
    addToken: (id: string) => call<{ tracker: Tracker; token: string }>('POST', `${tracker(id)}/tokens`),
    revokeToken: (id: string, token: string) => call<{ tracker: Tracker; alreadyRevoked: boolean }>('DELETE', `${tracker(id)}/tokens/${seg(token)}`),
    integration: (id: string) => call<IntegrationView>('GET', `${tracker(id)}/integration`),
    setPrivacyRule: (id: string, rule: PrivacyRule) => call<Tracker>('POST', `${tracker(id)}/privacy-rules`, rule),
    removePrivacyRule: (id: string, property: string) => call<Tracker>('DELETE', `${tracker(id)}/privacy-rules?property=${encodeURIComponent(property)}`),
    /** Records per minute over the last 24 hours, by endpoint and outcome. */
    traffic: (id: string) => call<TrafficPicture>('GET', `${tracker(id)}/traffic`),
    query: (id: string, sql: string, dest?: string) => call<QueryResult>('POST', `${tracker(id)}/query`, dest ? { sql, destination: dest } : { sql }),
  },
  /** The relay as a whole: Redis memory against its budget. */
  health: () => call<{ memory: MemorySnapshot }>('GET', '/health'),
  connectors: async () => (await call<{ connectors: ConnectorInfo[] }>('GET', '/connectors')).connectors,
  destinations: {
    list: async (id: string) => (await call<{ destinations: DestinationView[]; backlog: number }>('GET', `${tracker(id)}/destinations`)).destinations,
    /** The destinations, and the records that wait for the tracker's first destination. */
    overview: (id: string) => call<{ destinations: DestinationView[]; backlog: number; archive: ArchiveStatus }>('GET', `${tracker(id)}/destinations`),
    add: (id: string, input: { type: string; id?: string; settings: Record<string, unknown>; enabled: boolean }) => call<Destination>('POST', `${tracker(id)}/destinations`, input),
    update: (id: string, dest: string, input: { settings?: Record<string, unknown>; enabled?: boolean; rules?: DestinationRules | null }) => call<Destination>('PATCH', destination(id, dest), input),
    /** Sends the archived records of a range to the destination again, through its rules. */
    backfill: (id: string, dest: string, input: { since?: string; until?: string; resources?: string[] }) => call<Backfill>('POST', `${destination(id, dest)}/backfill`, input),
    cancelBackfill: (id: string, dest: string) => call<{ cancelled: boolean }>('DELETE', `${destination(id, dest)}/backfill`),
    /** What rules (a destination's saved ones, or `rules` to try) make of the tracker's last records. */
    preview: (id: string, input: { destination?: string; rules?: DestinationRules; limit?: number }) => call<RulesPreview>('POST', `${tracker(id)}/rules/preview`, input),
    remove: (id: string, dest: string) => call<{ removed: string; discarded: { queued: number; deadLetters: number } }>('DELETE', destination(id, dest)),
    test: (id: string, dest: string) => call<TestResult>('POST', `${destination(id, dest)}/test`),
    /** The same test on settings not saved yet; with the id of a saved destination, its secrets fill in `[redacted]`. */
    testSettings: (id: string, input: { type: string; id?: string; settings: Record<string, unknown> }) => call<TestResult>('POST', `${tracker(id)}/destinations/test-settings`, input),
    deadLetters: (id: string, dest: string, limit = 100) => call<{ total: number; entries: DeadLetter[] }>('GET', `${destination(id, dest)}/dead-letters?limit=${limit}`),
    replay: (id: string, dest: string, ids?: string[]) => call<{ replayed: number; destinationEnabled: boolean }>('POST', `${destination(id, dest)}/dead-letters/replay`, ids ? { ids } : {}),
    /** Delivered, dead-lettered, backlog and lag per minute over the last 24 hours, and the moments the state changed. */
    traffic: (id: string, dest: string) => call<DestinationPicture>('GET', `${destination(id, dest)}/traffic`),
    discard: (id: string, dest: string, ids?: string[]) => call<{ discarded: number }>('POST', `${destination(id, dest)}/dead-letters/discard`, ids ? { ids } : {}),
  },
  sources: {
    list: async (id: string) => (await call<{ sources: SourceView[] }>('GET', `${tracker(id)}/sources`)).sources,
    get: (id: string, src: string) => call<SourceView>('GET', source(id, src)),
    add: (id: string, input: { type: SourceType; id?: string; secret?: string; hmac?: Partial<HmacSettings>; mapping?: SourceMapping }) => call<SourceView>('POST', `${tracker(id)}/sources`, input),
    setMapping: (id: string, src: string, mapping: SourceMapping) => call<SourceView>('PATCH', source(id, src), { mapping }),
    rotateSecret: (id: string, src: string, input: { secret?: string; graceHours?: number }) => call<SourceView>('POST', `${source(id, src)}/rotate-secret`, input),
    remove: (id: string, src: string) => call<{ removed: string }>('DELETE', source(id, src)),
    deliveries: async (id: string, src: string) => (await call<{ deliveries: SourceDelivery[] }>('GET', `${source(id, src)}/deliveries`)).deliveries,
  },
  /** The URL of a tracker's live feed, for an EventSource (which sends the cookie). */
  liveUrl: (id: string) => `${BASE}${tracker(id)}/live`,
};

/** A message fit for an alert, whatever was thrown. */
export function messageOf(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  if (err instanceof Error) return err.message;
  return String(err);
}
