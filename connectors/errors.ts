/**
 * The error *type* decides what the delivery plumbing does:
 * - RetryableError: the same records are sent again after a backoff (honouring `retryAfterMs`).
 * - PermanentError: retrying cannot help; the records go to the dead-letter store.
 * - ConfigurationError: the destination's settings or access are wrong; delivery pauses and the
 *   records stay queued until the settings change or the periodic re-check succeeds.
 */
export abstract class ConnectorError extends Error {
  abstract readonly kind: 'retryable' | 'permanent' | 'configuration';
  constructor(
    message: string,
    readonly details: { status?: number; reason?: string; cause?: unknown } = {},
  ) {
    super(message);
  }
}

export class RetryableError extends ConnectorError {
  readonly kind = 'retryable' as const;
  override name = 'RetryableError';
  constructor(
    message: string,
    details: { status?: number; reason?: string; cause?: unknown; retryAfterMs?: number } = {},
  ) {
    super(message, details);
    this.retryAfterMs = details.retryAfterMs;
  }
  readonly retryAfterMs: number | undefined;
}

export class PermanentError extends ConnectorError {
  readonly kind = 'permanent' as const;
  override name = 'PermanentError';
}

export class ConfigurationError extends ConnectorError {
  readonly kind = 'configuration' as const;
  override name = 'ConfigurationError';
}

/**
 * HTTP status → error class, as the big destination frameworks do it: 408, 423, 429 and 5xx
 * (but 501) are worth retrying; 401, 403, 404 and 407 (a proxy's credentials) are problems the
 * owner must fix; other 4xx are permanent for the records that caused them.
 */
export function classifyHttpStatus(status: number, message: string, extra: { reason?: string; retryAfterMs?: number } = {}): ConnectorError {
  if (status === 408 || status === 423 || status === 429 || (status >= 500 && status !== 501)) {
    return new RetryableError(message, { status, ...extra });
  }
  if (status === 401 || status === 403 || status === 404) return new ConfigurationError(message, { status, ...extra });
  // The proxy between us and the destination wants credentials: a setting, not the records' fault.
  if (status === 407) return new ConfigurationError(`${message} (the proxy refused the request: give its credentials in HTTPS_PROXY, http://user:password@host:port)`, { status, ...extra });
  return new PermanentError(message, { status, ...extra });
}

/** Parses a Retry-After header (seconds or HTTP date) into milliseconds from `now`. */
export function parseRetryAfter(header: string | undefined | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export function isConnectorError(err: unknown): err is ConnectorError {
  return err instanceof ConnectorError;
}
