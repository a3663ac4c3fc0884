import { hostname, userInfo } from 'node:os';
import { runAudited, type Actor, type ObjectChange } from '../core/access/audit-context';
import { AuditLog } from '../core/access/audit-log';
import { createDefaultRegistry } from '../../connectors';
import { loadConfig, type Config } from '../core/config';
import { openRedisEndpoint } from '../core/redis/endpoint';
import { createRedisClient, whenConnected, type RedisClient, type RedisTarget } from '../core/redis/cluster';
import type { Logger } from '../core/logger';
import { createRedis } from '../core/redis/redis';
import { checkKeyspaceLayout, KeyspaceLayoutError } from '../core/redis/keyspace-layout';
import { DestinationService } from '../operator/destination-service';
import { TrackerStore } from '../core/trackers/store';
import { TrackerService } from '../operator/tracker-service';
import { SourceService } from '../operator/source-service';
import { SourceDeliveryLog } from '../core/trackers/source-deliveries';
import { DeliveryAdmin } from '../operator/delivery-admin';
import { RulesPreviewer } from '../operator/rules-preview';
import { RequestHistory } from '../core/requests/request-history';
import { keyFileOf } from '../core/secrets/key-file';
import { SecretsService } from '../operator/secrets-service';

/** A failure the CLI reports as one line, without a stack. */
export class CliError extends Error {
  override name = 'CliError';
}

export interface CliContext {
  config: Readonly<Config>;
  /** The command's own connection, for what the services do not cover (an import's lane). */
  redis: RedisClient;
  service: TrackerService;
  destinations: DestinationService;
  admin: DeliveryAdmin;
  /** Destination rules run over a tracker's last records, saved or not. */
  preview: RulesPreviewer;
  sources: SourceService;
  /** Each tracker's last requests, and those with an unknown token. */
  requests: RequestHistory;
  /** The secrets kept in Redis and the key file that encrypts them. */
  secrets: SecretsService;
}

/** Long enough for a slow network, short enough that a typo in REDIS_URL does not look like a hang. */
const CONNECT_DEADLINE_MS = 5000;

function redact(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}

/**
 * The producer connection has no offline queue, so commands sent before it is up would fail: wait
 * for `ready` (on a cluster, for every master's own connection too: see whenConnected), and give
 * up at the first connection error rather than retrying for ever.
 */
async function connect(target: string | RedisTarget, fromEnv: boolean): Promise<RedisClient> {
  const redis = typeof target === 'string' ? createRedis(target, 'producer') : createRedisClient(target, 'producer');
  const where = typeof target === 'string' ? redact(target) : `the Redis Cluster ${target.redisCluster!.nodes.map((n) => `${n.host}:${n.port}`).join(',')}`;
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer within ${CONNECT_DEADLINE_MS} ms`)), CONNECT_DEADLINE_MS);
      redis.once('ready', () => {
        whenConnected(redis).then(
          () => {
            clearTimeout(timer);
            resolve();
          },
          (err: Error) => {
            clearTimeout(timer);
            reject(err);
          },
        );
      });
      redis.once('error', (err: Error) => {
        clearTimeout(timer);
        reject(err);
      });
    });
  } catch (err) {
    redis.disconnect();
    const how = typeof target !== 'string' ? 'check REDIS_CLUSTER_NODES' : fromEnv ? 'check REDIS_URL, or start Redis there' : 'start Redis there, or set REDIS_URL';
    throw new CliError(`cannot reach Redis at ${where} (${(err as Error).message}); ${how}.`);
  }
  return redis;
}

let logger: Logger | undefined;

/**
 * The connectors' logger, made when a command first opens a connector: pino and what it loads
 * (sonic-boom, thread-stream, worker_threads) take a few milliseconds that a command reading Redis
 * alone should not pay. stdout carries the command's output, so connector logs go to stderr, and
 * only warnings and worse.
 */
export function connectorLogger(): Logger {
  if (!logger) {
    const pino = require('pino') as typeof import('pino');
    const { createLogger } = require('../core/logger') as typeof import('../core/logger');
    logger = createLogger('warn', pino.destination({ fd: 2, sync: true }));
  }
  return logger;
}

let commandName = 'command';

/** The command being run (`destinations add`), for its audit entry: its name only, never its arguments, which may hold secrets. */
export function setCommandName(name: string): void {
  commandName = name;
}

/**
 * Runs a command as the operator at this terminal: what it changes is written to the audit log as
 * one entry (an operator with Redis is trusted, but not anonymous).
 */
async function runCommandAudited<T>(redis: RedisClient, config: Readonly<Config>, fn: () => Promise<T>): Promise<T> {
  const actor: Actor = { kind: 'cli', label: `cli ${userInfo().username}@${hostname()}` };
  const { result, error, changes } = await runAudited({ actor }, fn);
  if (changes.length > 0 || !readsOnly(commandName)) {
    const outcome = error === undefined ? 'ok' : 'failed';
    await new AuditLog(redis, config.redisPrefix, config.audit)
      .append({ actor, action: `cli ${commandName}`, target: targetOf(changes), changes, outcome, ...(error !== undefined ? { reason: (error as Error).message } : {}) })
      .catch((err: unknown) => process.stderr.write(`tributary: the audit entry of this command was not written: ${(err as Error).message}\n`));
  }
  if (error !== undefined) throw error;
  return result as T;
}

/**
 * Commands that only read (lists, previews, queries, the audit log itself) are not audited; every
 * other one is, whether it changed stored state (the changes are in the entry) or acted otherwise
 * (dead letters replayed or discarded, a backfill started, a destination tested), and whether it
 * succeeded or not.
 */
function readsOnly(name: string): boolean {
  return /(^| )(list|show|preview|status|query|export|audit|requests)( |$)/.test(name);
}

function targetOf(changes: ObjectChange[]): Record<string, string> {
  const target: Record<string, string> = {};
  for (const { object } of changes) {
    const [kind, id] = object.split(' ');
    if (kind && id && target[kind] === undefined) target[kind] = id;
  }
  return target;
}

/** Opens Redis, runs `fn`, and closes Redis whatever happened. */
export async function withContext<T>(fn: (ctx: CliContext) => Promise<T>): Promise<T> {
  const config = loadConfig();
  // Without REDIS_URL the CLI talks to the server's embedded Redis, or starts it for the command's
  // duration; whether it answers is checked with the connection the command then uses.
  let probed: RedisClient | undefined;
  const probe = async (url: string): Promise<boolean> => {
    probed = await connect(url, false).catch(() => undefined);
    return probed !== undefined;
  };
  const endpoint = await openRedisEndpoint(config, probe).catch((err: Error) => {
    probed?.disconnect();
    throw new CliError(err.message);
  });
  const redis =
    probed ??
    (await connect(endpoint.target.redisCluster ? endpoint.target : endpoint.target.redisUrl!, config.redisUrl !== undefined).catch(async (err: unknown) => {
      await endpoint.stop();
      throw err;
    }));
  // The relay's key file (SECRETS_KEY_FILE or DATA_DIR/secrets-key): what the CLI writes, it encrypts as the relay does.
  const keys = keyFileOf(config);
  const store = new TrackerStore(redis, config.redisPrefix, keys);
  const destinations = new DestinationService(store, createDefaultRegistry(), config.dataDir, connectorLogger);
  const admin = new DeliveryAdmin({ destinations, trackers: store, redis, keyspace: config.keyspace, dataDir: config.dataDir, warehouse: config.warehouse });
  try {
    await checkKeyspaceLayout(redis, config.keyspace).catch((err: unknown) => {
      throw err instanceof KeyspaceLayoutError ? new CliError(err.message) : err;
    });
    const context: CliContext = { config, redis, service: new TrackerService(store), destinations, admin, preview: new RulesPreviewer({ destinations, redis, keyspace: config.keyspace }), sources: new SourceService(store, undefined, new SourceDeliveryLog(redis, config.redisPrefix)), requests: new RequestHistory(redis, config.redisPrefix), secrets: new SecretsService(store, keys, redis, config.dataDir) };
    return await runCommandAudited(redis, config, () => fn(context));
  } finally {
    await redis.quit().catch(() => redis.disconnect());
    await endpoint.stop();
  }
}
