import { classifyHttpStatus, ConfigurationError, ConnectorError, PermanentError, RetryableError } from '../errors';

/** What the client library throws: an `ApiError` (HTTP answer) or a transport error (`FetchError`, socket errors). */
interface ClientErrorShape {
  code?: unknown;
  type?: unknown;
  message?: unknown;
  errors?: Array<{ reason?: unknown; message?: unknown; location?: unknown }>;
}

export interface GoogleErrorInfo {
  status: number | undefined;
  reason: string | undefined;
  message: string;
}

export function errorInfo(err: unknown): GoogleErrorInfo {
  const e = (err ?? {}) as ClientErrorShape;
  const first = Array.isArray(e.errors) ? e.errors[0] : undefined;
  return {
    status: typeof e.code === 'number' ? e.code : undefined,
    reason: typeof first?.reason === 'string' ? first.reason : undefined,
    message: typeof e.message === 'string' ? e.message : String(err),
  };
}

/** The HTTP status of a client error, or undefined for a transport failure. */
export const statusOf = (err: unknown): number | undefined => errorInfo(err).status;

export const isNotFound = (err: unknown): boolean => errorInfo(err).status === 404;
export const isAlreadyExists = (err: unknown): boolean => errorInfo(err).status === 409;

/**
 * Reasons from https://cloud.google.com/bigquery/docs/error-messages that retrying can fix:
 * quotas and rate limits (403 `rateLimitExceeded` / `quotaExceeded`, to be retried with
 * exponential backoff), and backend trouble (500/503 `backendError`, `internalError`).
 */
const RETRY_REASONS = new Set(['rateLimitExceeded', 'quotaExceeded', 'backendError', 'internalError', 'jobBackendError', 'jobInternalError', 'jobRateLimitExceeded', 'tableUnavailable']);

/**
 * Concurrent DML on one table is refused with 400 `invalidQuery` ("Could not serialize access to
 * table … due to concurrent update", "Transaction is aborted due to concurrent update"): BigQuery's
 * optimistic concurrency, worth a retry. https://cloud.google.com/bigquery/docs/data-manipulation-language#dml_statement_conflicts
 */
export const isConcurrentUpdate = (message: string): boolean => /concurrent update|could not serialize access/i.test(message);

/** Where a call went and as whom, for messages that say what to do. */
export interface CallContext {
  projectId: string;
  dataset: string;
  /** The service account's e-mail, or how the credentials are named when there is none. */
  identity: string;
}

/**
 * The next step for a refusal only the owner can fix (https://cloud.google.com/bigquery/docs/error-messages),
 * or undefined when there is nothing better to say than Google's words.
 */
function nextStep(status: number, reason: string | undefined, message: string, ctx: CallContext): string | undefined {
  const project = ctx.projectId;
  if (reason === 'accessNotConfigured' || /has not been used in project|is disabled/i.test(message)) {
    return `The BigQuery API is not enabled in project ${project}: enable it at https://console.cloud.google.com/apis/library/bigquery.googleapis.com?project=${project} (Enable), wait a minute, then test again.`;
  }
  if (reason === 'billingNotEnabled') {
    return `Billing is not enabled for project ${project}, and BigQuery's streaming inserts need it: link a billing account at https://console.cloud.google.com/billing/linkedaccount?project=${project}.`;
  }
  if (status === 401) {
    return `Google refused the key of ${ctx.identity}: it was deleted or disabled, or its service account was. Create a new JSON key (https://console.cloud.google.com/iam-admin/serviceaccounts?project=${project} → the account → Keys → Add key → JSON) and use it instead.`;
  }
  if (status === 403 && (reason === 'accessDenied' || /permission|access denied/i.test(message))) {
    return `${ctx.identity} may not do this in ${project}.${ctx.dataset}: grant it the role BigQuery Data Editor on the dataset (BigQuery → the dataset → Share → Manage permissions → Add principal) and BigQuery Job User on the project (https://console.cloud.google.com/iam-admin/iam?project=${project} → Grant access).`;
  }
  return undefined;
}

/** A client error as the framework's error class; `what` names the call for the message. */
export function toConnectorError(err: unknown, what: string, ctx?: CallContext): ConnectorError {
  if (err instanceof ConnectorError) return err;
  const { status, reason, message } = errorInfo(err);
  const step = status !== undefined && ctx ? nextStep(status, reason, message, ctx) : undefined;
  const text = step ? `${step} Google said (${what}): ${message}` : `BigQuery ${what} failed: ${message}`;
  const details = { status, reason, cause: err };
  if (status === undefined) {
    // No HTTP answer: refused or reset connection, timeout, DNS. The request may or may not have
    // been applied; retrying is safe because every write is idempotent (insertId, MERGE by key).
    const code = (err as ClientErrorShape)?.code;
    return new RetryableError(text, { ...details, reason: typeof code === 'string' ? code : String((err as ClientErrorShape)?.type ?? 'network') });
  }
  if (reason && RETRY_REASONS.has(reason)) return new RetryableError(text, details);
  if (isConcurrentUpdate(message)) return new RetryableError(text, { ...details, reason: 'concurrentUpdate' });
  // A deleted dataset or table: the writer forgets its schema cache and recreates it on the retry.
  if (status === 404) return new RetryableError(text, { ...details, reason: reason ?? 'notFound' });
  if (reason === 'responseTooLarge') return new PermanentError(text, details);
  // Any other 401/403 (`accessDenied`, `accessNotConfigured` = API disabled, `billingNotEnabled`):
  // only the owner can fix it, so delivery pauses and re-checks rather than dropping records.
  if (status === 401 || status === 403) return new ConfigurationError(text, details);
  if (status === 400) return new PermanentError(text, details);
  return classifyHttpStatus(status, text, { reason });
}
