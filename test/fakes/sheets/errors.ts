/**
 * Google's JSON error body (https://cloud.google.com/apis/design/errors#http_mapping):
 * `{"error":{"code":429,"message":"...","status":"RESOURCE_EXHAUSTED","details":[...]}}`.
 */
export interface GoogleErrorBody {
  error: { code: number; message: string; status: string; details?: unknown[] };
}

export class GoogleApiError extends Error {
  constructor(
    readonly code: number,
    readonly status: string,
    message: string,
    readonly details?: unknown[],
  ) {
    super(message);
  }

  body(): GoogleErrorBody {
    return { error: { code: this.code, message: this.message, status: this.status, ...(this.details ? { details: this.details } : {}) } };
  }
}

export const invalidArgument = (message: string) => new GoogleApiError(400, 'INVALID_ARGUMENT', message);
export const notFound = () => new GoogleApiError(404, 'NOT_FOUND', 'Requested entity was not found.');
export const permissionDenied = () => new GoogleApiError(403, 'PERMISSION_DENIED', 'The caller does not have permission');
/** What Google answers a credential that may not own files (a service account) creating one. */
export const storageQuotaExceeded = () => new GoogleApiError(403, 'PERMISSION_DENIED', "The user's Drive storage quota has been exceeded.");

export function serviceDisabled(project: string): GoogleApiError {
  return new GoogleApiError(
    403,
    'PERMISSION_DENIED',
    `Google Sheets API has not been used in project ${project} before or it is disabled. Enable it by visiting https://console.developers.google.com/apis/api/sheets.googleapis.com/overview?project=${project} then retry.`,
    [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'SERVICE_DISABLED', domain: 'googleapis.com', metadata: { service: 'sheets.googleapis.com', consumer: `projects/${project}` } }],
  );
}

export function unauthenticated(): GoogleApiError {
  return new GoogleApiError(401, 'UNAUTHENTICATED', 'Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential.');
}

/** Google's answer to a bearer token it cannot accept: a deleted key, a bad signature, an expired token. */
export function invalidCredentials(): GoogleApiError {
  return new GoogleApiError(
    401,
    'UNAUTHENTICATED',
    'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.',
  );
}

/** The 429 Sheets answers past a per-minute quota (https://developers.google.com/workspace/sheets/api/limits). */
export function quotaExceeded(kind: 'Read' | 'Write', scope: 'user' | 'project', project: string): GoogleApiError {
  const limit = `${kind}RequestsPerMinute${scope === 'user' ? 'PerUser' : ''}`;
  return new GoogleApiError(
    429,
    'RESOURCE_EXHAUSTED',
    `Quota exceeded for quota metric '${kind} requests' and limit '${kind} requests per minute${scope === 'user' ? ' per user' : ''}' of service 'sheets.googleapis.com' for consumer 'project_number:${project}'.`,
    [
      {
        '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
        reason: 'RATE_LIMIT_EXCEEDED',
        domain: 'googleapis.com',
        metadata: { service: 'sheets.googleapis.com', quota_metric: `sheets.googleapis.com/${kind.toLowerCase()}_requests`, quota_limit: limit, consumer: `projects/${project}` },
      },
    ],
  );
}

export const internalError = () => new GoogleApiError(500, 'INTERNAL', 'Internal error encountered.');
export const unavailable = () => new GoogleApiError(503, 'UNAVAILABLE', 'The service is currently unavailable.');
