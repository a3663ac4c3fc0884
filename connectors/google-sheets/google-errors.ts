import { classifyHttpStatus, ConfigurationError, ConnectorError, parseRetryAfter, PermanentError, RetryableError } from '../errors';

/** The parts of a gaxios error this module reads. */
interface HttpFailure {
  message: string;
  code?: string | number;
  cause?: unknown;
  response?: { status: number; data?: unknown; headers?: { get?: (name: string) => string | null } };
}

/** Google's error body: `{"error":{"code":429,"message":"...","status":"RESOURCE_EXHAUSTED","details":[...]}}`. */
interface GoogleError {
  code?: number;
  message?: string;
  status?: string;
  details?: Array<{ reason?: string; metadata?: Record<string, unknown> }>;
}

export interface ErrorContext {
  spreadsheetId: string | undefined;
  /** Set when `spreadsheetId` is one the events of this spreadsheet continue in. */
  continuationOf?: string | undefined;
  identity: string;
  now: number;
}

/** Errors whose cause is our stale picture of the spreadsheet (a person changed it): re-read it and retry. */
export const LAYOUT_CHANGED = 'layout-changed';

const isHttpFailure = (err: unknown): err is HttpFailure => typeof err === 'object' && err !== null && 'message' in err;

function googleError(data: unknown): GoogleError | undefined {
  const e = (data as { error?: unknown } | undefined)?.error;
  return typeof e === 'object' && e !== null ? (e as GoogleError) : undefined;
}

/** Quotas are refilled every minute: wait into the next one (https://developers.google.com/workspace/sheets/api/limits). */
export function untilNextMinute(now: number): number {
  return 60_000 - (now % 60_000) + 1000;
}

/** gaxios says "Unexpected Gaxios Error"; the cause says what happened (TimeoutError, fetch failed: other side closed). */
function describeCause(err: HttpFailure): string {
  const parts: string[] = [];
  for (let e: unknown = err.cause; e instanceof Error && parts.length < 3; e = e.cause) parts.push(`${e.name}: ${e.message}`);
  return parts.length > 0 ? parts.join(' ← ') : err.message;
}

/** Google's answer to a key it no longer accepts, as the next step to take. */
function keyRefused(identity: string, said: string): string {
  return `Google refused the key of ${identity}: it was deleted or disabled, or its service account was. Create a new JSON key (https://console.cloud.google.com/iam-admin/serviceaccounts → the account → Keys → Add key → JSON) and use it instead. Google said: ${said}`;
}

/** The project number in an ErrorInfo's `consumer` (`projects/123456789012`). */
function consumerProject(body: GoogleError | undefined): string | undefined {
  for (const d of body?.details ?? []) {
    const consumer = d.metadata?.consumer;
    if (typeof consumer === 'string' && consumer.startsWith('projects/')) return consumer.slice('projects/'.length);
  }
  return undefined;
}

const CREDENTIALS_PROBLEM = /Could not load the default credentials|Could not refresh access token|invalid_grant|invalid_client|private key|No key or keyFile set|ENOENT/i;

/** Maps whatever the googleapis client threw to the error type that decides what delivery does. */
export function toConnectorError(err: unknown, ctx: ErrorContext): ConnectorError {
  if (err instanceof ConnectorError) return err;
  if (!isHttpFailure(err)) return new RetryableError(`unexpected error from the Sheets client: ${String(err)}`, { cause: err });
  const res = err.response;
  if (!res) {
    if (CREDENTIALS_PROBLEM.test(err.message)) return new ConfigurationError(`Google credentials (${ctx.identity}) cannot be used: ${err.message}`, { cause: err });
    // No answer: timeout, reset, refused. A write may or may not have landed; the writer checks.
    return new RetryableError(`no answer from the Sheets API: ${describeCause(err)}`, { reason: 'no-response', cause: err });
  }
  const status = res.status;
  const body = googleError(res.data);
  // The OAuth token endpoint answers `{"error":"invalid_grant","error_description":"..."}`.
  const oauth = res.data as { error?: unknown; error_description?: unknown } | undefined;
  if (typeof oauth?.error === 'string') {
    const said = `${oauth.error} ${String(oauth.error_description ?? '')}`.trim();
    return new ConfigurationError(oauth.error === 'invalid_grant' ? keyRefused(ctx.identity, said) : `Google refused the credentials (${ctx.identity}): ${said}`, { status, reason: oauth.error });
  }
  const message = body?.message ?? err.message;
  const reasons = new Set((body?.details ?? []).map((d) => d.reason));
  const sheet = ctx.spreadsheetId ? `spreadsheet ${ctx.spreadsheetId}` : 'the spreadsheet';
  if (status === 429 || reasons.has('RATE_LIMIT_EXCEEDED')) {
    const retryAfterMs = Math.max(untilNextMinute(ctx.now), parseRetryAfter(res.headers?.get?.('retry-after'), ctx.now) ?? 0);
    return new RetryableError(`Sheets API quota exceeded (${ctx.identity}): ${message}`, { status, reason: 'RESOURCE_EXHAUSTED', retryAfterMs });
  }
  if (status === 403 && (reasons.has('SERVICE_DISABLED') || /has not been used|is disabled/i.test(message))) {
    const project = consumerProject(body) ?? /project[= ](\w[\w-]*)/.exec(message)?.[1];
    const where = project ? ` in project ${project}` : ` in the project of ${ctx.identity}`;
    const link = `https://console.cloud.google.com/apis/library/sheets.googleapis.com${project ? `?project=${project}` : ''}`;
    return new ConfigurationError(`The Google Sheets API is not enabled${where}: enable it at ${link} (Enable), wait a minute, then test again. Google said: ${message}`, { status, reason: 'SERVICE_DISABLED' });
  }
  if (status === 403) {
    const share = ctx.identity.includes('@') ? `open it, click Share, paste ${ctx.identity}, choose Editor, and send` : `share it with the service account whose credentials the relay uses (${ctx.identity}) as Editor`;
    return new ConfigurationError(`${sheet} is not shared with ${ctx.identity}: ${share}. Google said: ${message}`, { status, reason: body?.status ?? 'PERMISSION_DENIED' });
  }
  if (status === 401) return new ConfigurationError(keyRefused(ctx.identity, message), { status, reason: body?.status });
  if (status === 404 && ctx.continuationOf) {
    return new ConfigurationError(`${sheet}, where the events of spreadsheet ${ctx.continuationOf} continue since it was full, was not found (deleted?): set a new spreadsheetId to start over (${message})`, { status, reason: body?.status });
  }
  if (status === 404) return new ConfigurationError(`No such spreadsheet: ${ctx.spreadsheetId ?? 'its id'} was not found. Check the address: open the spreadsheet and copy its URL from the browser into spreadsheetId (${message})`, { status, reason: body?.status });
  if (status === 400) {
    if (/exceeds grid limits|Unable to parse range|already exists|No grid with id/i.test(message)) {
      return new RetryableError(`the spreadsheet changed under the writer: ${message}`, { status, reason: LAYOUT_CHANGED });
    }
    if (/above the limit of \d+ cells/i.test(message)) return new ConfigurationError(`${sheet} is full: ${message}`, { status, reason: 'FULL' });
    return new PermanentError(`Sheets refused the batch: ${message}`, { status, reason: body?.status });
  }
  return classifyHttpStatus(status, `Sheets API error ${status}: ${message}`, { reason: body?.status });
}

/**
 * Google's words when it refuses spreadsheets.create for lack of permission (401/403), or
 * undefined for any other failure. Since 2025 Google gives service accounts no Drive storage: they
 * read and write spreadsheets shared with them but cannot own new ones ("The user's Drive storage
 * quota has been exceeded."). https://developers.google.com/workspace/drive/api/guides/about-shareddrives
 */
export function createRefusal(err: unknown): { status: number; said: string } | undefined {
  const res = isHttpFailure(err) ? err.response : undefined;
  if (res?.status !== 401 && res?.status !== 403) return undefined;
  return { status: res.status, said: googleError(res.data)?.message ?? `HTTP ${res.status}` };
}
