import { ConfigurationError, PermanentError, RetryableError, type ConnectorError } from '../errors';
import { quoteIdent } from './sql';

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
/** Node's codes for a certificate TLS would not accept (tls.checkServerIdentity, OpenSSL's verify errors). */
const TLS_CERTIFICATE = /^(ERR_TLS_CERT_ALTNAME_INVALID|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_(GET_ISSUER_CERT(_LOCALLY)?|VERIFY_LEAF_SIGNATURE)|CERT_(HAS_EXPIRED|NOT_YET_VALID|UNTRUSTED|REJECTED|SIGNATURE_FAILURE))$/;

/** The names a message gives in the statements it suggests. */
export interface ConnectionNames {
  user: string;
  database: string;
  schema: string;
}

/** What to run (as the database's owner or a superuser) for the right a 42501 says is missing. */
function missingRight(message: string, names: ConnectionNames | undefined): string {
  const role = names ? quoteIdent(names.user) : '…';
  const database = names ? quoteIdent(names.database) : '…';
  const schema = names ? quoteIdent(names.schema) : '…';
  if (/permission denied for database/i.test(message)) {
    return `Tributary makes the schema ${schema} when it is missing, which needs CREATE on the database: GRANT CREATE ON DATABASE ${database} TO ${role}; or make the schema for it: CREATE SCHEMA ${schema} AUTHORIZATION ${role}`;
  }
  if (/temporary tables/i.test(message)) return `Each batch is staged in a temporary table: GRANT TEMPORARY ON DATABASE ${database} TO ${role}`;
  if (/must be owner/i.test(message)) return `Tributary adds columns to its tables, which only their owner can: ALTER TABLE ${schema}.… OWNER TO ${role} for users, sessions and events`;
  // Rights taken from the tables (not the schema) want another GRANT than the schema's.
  if (/permission denied for (table|relation)/i.test(message)) {
    return `The role needs SELECT, INSERT and UPDATE on the tables users, sessions and events: GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA ${schema} TO ${role}`;
  }
  return `The role needs USAGE and CREATE on the schema: GRANT USAGE, CREATE ON SCHEMA ${schema} TO ${role}`;
}

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
export function toConnectorError(target: string, err: unknown, names?: ConnectionNames): ConnectorError {
  const e = (err ?? {}) as PgLikeError;
  const code = e.code ?? '';
  const text = serverMessage(e);
  const cause = { cause: err, reason: code || undefined };
  if (NETWORK.has(code) || /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(e.message ?? '')) {
    return new RetryableError(`PostgreSQL at ${target} cannot be reached (${code || e.message}): check host and port, that the server runs and listens on that address (listen_addresses), and that no firewall or provider's allow-list keeps this host out; batches are retried meanwhile`, cause);
  }
  // TLS: the server has none, or its certificate is not one sslmode accepts. Retrying changes neither.
  if (/does not support SSL/i.test(e.message ?? '')) return new ConfigurationError(`PostgreSQL at ${target} does not accept TLS: set sslmode to disable, or turn ssl on in the server`, cause);
  if (TLS_CERTIFICATE.test(code)) return new ConfigurationError(`PostgreSQL at ${target}: its certificate was refused (${code}: ${e.message}). With sslmode verify-ca or verify-full, give the authority's certificate in NODE_EXTRA_CA_CERTS, or use sslmode require`, cause);
  if (code === 'ENOTFOUND') return new ConfigurationError(`PostgreSQL at ${target}: the host name is not known to DNS (${e.message}). Check host: a host name, an address, or a Unix socket's directory`, cause);
  switch (code.slice(0, 2)) {
    case '08': // connection exception
    case '53': // insufficient resources (too many connections, disk full)
    case '40': // serialization failure, deadlock
      return new RetryableError(`PostgreSQL at ${target}: ${text}; the batch is retried`, cause);
    case '57': // operator intervention: query cancelled (statement timeout), admin shutdown, cannot connect now
      return new RetryableError(`PostgreSQL at ${target}: ${text}${code === '57014' ? ' (statementTimeoutMs)' : ''}; the batch is retried`, cause);
    case '28':
      if (names && /role .* does not exist/.test(e.message ?? '')) {
        return new ConfigurationError(`PostgreSQL refused the login to ${target}: ${text}. Check user, or make the role (as a superuser: CREATE ROLE ${quoteIdent(names.user)} LOGIN PASSWORD '…')`, cause);
      }
      return new ConfigurationError(`PostgreSQL refused the login to ${target}: ${text}. Check user and password, that the role may log in (ALTER ROLE … LOGIN), and that pg_hba.conf lets this host in`, cause);
    case '3D':
      return new ConfigurationError(`PostgreSQL at ${target}: ${text}. Check database, or make it (CREATE DATABASE ${names ? quoteIdent(names.database) : '…'})`, cause);
    case '3F':
      return new ConfigurationError(`PostgreSQL at ${target}: ${text}. Create the schema, or give the role CREATE on the database so Tributary can`, cause);
    case '42':
      // A table or column dropped or renamed by hand, or a column made or retyped by hand in
      // another type than the writer knew (42804: ADD COLUMN IF NOT EXISTS kept the hand-made one):
      // the schema is read again and the batch retried. Planned from the catalog as it is, a batch
      // never puts a value in a column of another type, so 42804 means a stale view, not bad data.
      if (code === '42P01' || code === '42703' || code === '42804') return new RetryableError(`PostgreSQL at ${target}: ${text} (changed outside Tributary); the tables are read again and the batch retried`, cause);
      if (code === '42501') return new ConfigurationError(`PostgreSQL at ${target}: ${text}. ${missingRight(e.message ?? '', names)}; delivery resumes once granted`, cause);
      return new PermanentError(`PostgreSQL at ${target} refused a statement: ${text}`, cause);
    default:
      return new PermanentError(`PostgreSQL at ${target}: ${text}`, cause);
  }
}
