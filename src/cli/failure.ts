import { InvalidArgumentError } from 'commander';
import { ConfigError } from '../core/config';
import { isOutOfMemoryError, OUT_OF_MEMORY_MESSAGE } from '../core/redis/out-of-memory';
import { DeliveryAdminError } from '../operator/delivery-admin';
import { DestinationServiceError } from '../operator/destination-service';
import { SourceServiceError } from '../operator/source-service';
import { TrackerServiceError } from '../operator/tracker-service';
import { AccessServiceError } from '../operator/access-service';
import { CliError } from './context';
import { SecretsError } from '../core/secrets/keyring';

/** Refusals whose message is written for the operator: shown as they are, without a stack. */
const EXPECTED = [TrackerServiceError, DestinationServiceError, DeliveryAdminError, SourceServiceError, AccessServiceError, CliError, ConfigError, InvalidArgumentError, SecretsError];

/** Errors of ioredis that mean the connection, not the command, failed. */
const CONNECTION_ERRORS = ['MaxRetriesPerRequestError', 'ClusterAllFailedError'];
const CONNECTION_MESSAGE = /^(Connection is closed|Stream isn't writeable|connect E|read E|write E|getaddrinfo )/;

/**
 * Every failure in words that say what went wrong: the operator never gets a bare "unexpected
 * error", and never Redis's script names and line numbers.
 */
export function describeFailure(err: unknown): string {
  if (EXPECTED.some((E) => err instanceof E)) return (err as Error).message;
  if (isOutOfMemoryError(err)) return OUT_OF_MEMORY_MESSAGE;
  const message = err instanceof Error ? err.message : String(err);
  const name = err instanceof Error ? err.name : '';
  if (CONNECTION_ERRORS.includes(name) || CONNECTION_MESSAGE.test(message)) return `lost the connection to Redis (${message}); nothing may have been changed: check that Redis runs (REDIS_URL), then run the command again.`;
  // Redis's own refusals (ReplyError): the first line, without the script it came from.
  if (name === 'ReplyError') return `Redis refused the command: ${message.replace(/\.? script: [0-9a-f]+, on @user_script:\d+\.?$/, '').split('\n')[0]}.`;
  return `the command failed: ${message}`;
}
