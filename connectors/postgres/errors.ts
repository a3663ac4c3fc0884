import { ConfigurationError, PermanentError, RetryableError, type ConnectorError } from '../errors';

/** What pg hands over: a server error carries its SQLSTATE in `code`, a socket error Node's code. */
interface PgLikeError {
  code?: string;
  message?: string;
  detail?: string;
  hint?: string;
  schema?: string;
  table?: string;
  column?: string;
}

const NETWORK = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'EAI_AGAIN']);

/** The server's message with its detail and hint, as psql prints them. */
function serverMessage(e: PgLikeError): string {
  return [e.message ?? String(e), e.detail ? `DETAIL: ${e.detail}` : '', e.hint ? `HINT: ${e.hint}` : ''].filter(Boolean).join(' ');
}

/**
 * A failure as delivery should treat it, with the database's own message and what to do:
 * - the server unreachable, restarting, shutting down, out of connections, a statement cancelled by
 *   `statementTimeoutMs`, a deadlock or serialization failure → RetryableError (the batch again
 *   after a backoff; the disk spool holds what arrives meanwhile);
 * - a refused login, a missing database, schema rights missing, an unknown host → ConfigurationError
 *   (delivery pauses, records stay queued, and it resumes by itself once the re-check passes);
 * - anything else the server refuses about the data → PermanentError (dead letters, with the message).
 */
export function toConnectorError(target: string, err: unknown): ConnectorError {
  const e = (err ?? {}) as PgLikeError;
  const code = e.code ?? '';
  const text = serverMessage(e);
  const cause = { cause: err, reason: code || undefined };
  if (NETWORK.has(code) || /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(e.message ?? '')) {
    return new RetryableError(`PostgreSQL at ${target} cannot be reached (${code || e.message}); the batch is retried`, cause);
  }
  if (code === 'ENOTFOUND') return new ConfigurationError(`PostgreSQL host of ${target} is not known to DNS (${e.message}): check host`, cause);
  switch (code.slice(0, 2)) {
    case '08': // connection exception
    case '53': // insufficient resources (too many connections, disk full)
    case '40': // serialization failure, deadlock
      return new RetryableError(`PostgreSQL at ${target}: ${text}; the batch is retried`, cause);
    case '57': // operator intervention: query cancelled (statement timeout), admin shutdown, cannot connect now
      return new RetryableError(`PostgreSQL at ${target}: ${text}${code === '57014' ? ' (statementTimeoutMs)' : ''}; the batch is retried`, cause);
    case '28':
      return new ConfigurationError(`PostgreSQL refused the login to ${target}: ${text}. Check user and password, and that pg_hba.conf lets this host in`, cause);
    case '3D':
      return new ConfigurationError(`PostgreSQL at ${target}: ${text}. Create the database (CREATE DATABASE …), or fix database`, cause);
    case '3F':
      return new ConfigurationError(`PostgreSQL at ${target}: ${text}. Create the schema, or give the role CREATE on the database so Tributary can`, cause);
    case '42':
      // A table or column dropped or renamed by hand: the schema is read again and the batch retried.
      if (code === '42P01' || code === '42703') return new RetryableError(`PostgreSQL at ${target}: ${text} (changed outside Tributary); the tables are read again and the batch retried`, cause);
      if (code === '42501') {
        return new ConfigurationError(`PostgreSQL at ${target}: ${text}. The role needs USAGE and CREATE on the schema (GRANT USAGE, CREATE ON SCHEMA … TO …), or CREATE on the database to make it; delivery resumes once granted`, cause);
      }
      return new PermanentError(`PostgreSQL at ${target} refused a statement: ${text}`, cause);
    default:
      return new PermanentError(`PostgreSQL at ${target}: ${text}`, cause);
  }
}
