import os from 'node:os';
import path from 'node:path';
import * as z from 'zod';
import { Keyspace, MAX_SHARDS } from './redis/keyspace';
import { ClusterNodesError, parseClusterNodes, type ClusterSeeds } from './redis/cluster-nodes';
import { DEFAULT_KEY_FILE } from './secrets/key-file';

/**
 * The only reader of `process.env`. Every setting is listed in `.env.example` with its default;
 * the schema is parsed once at boot and the result is frozen.
 */
const int = (def: number, min = 0) => z.coerce.number().int().min(min).default(def);
const bool = (def: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'])
    .default(def ? 'true' : 'false')
    .transform((v) => v === 'true' || v === '1' || v === 'yes');

const EnvSchema = z.object({
  PORT: int(8080),
  HOST: z.string().default('0.0.0.0'),
  API_PROCESSES: z
    .string()
    .trim()
    .regex(/^(auto|[1-9][0-9]{0,3})$/i, 'an integer from 1 to 9999, or auto (one per CPU)')
    .default('1'),
  PUBLIC_URL: z.string().url().optional(),
  REDIS_URL: z.string().url().optional(),
  REDIS_CLUSTER_NODES: z.string().optional(),
  REDIS_PREFIX: z.string().min(1).default('tributary'),
  REDIS_SHARDS: int(1, 1).pipe(z.number().max(MAX_SHARDS)),
  DATA_DIR: z.string().default('./data'),
  TRIBUTARY_CONFIG: z.string().optional(),
  SECRETS_KEY_FILE: z.string().min(1).optional(),
  ADMIN_TOKEN: z.string().trim().min(22, 'the admin token needs at least 22 characters (128 bits of base64)').optional(),
  CONSOLE_SESSION_IDLE_MINUTES: int(120, 1),
  CONSOLE_SESSION_MAX_HOURS: int(12, 1),
  AUDIT_RETENTION_DAYS: int(400, 1),
  AUDIT_MAX_ENTRIES: int(200_000, 1000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  TRUST_PROXY: bool(false),
  LIMIT_REQUEST_BYTES: int(1_048_576, 1),
  LIMIT_HEADER_BYTES: int(65_536, 1024),
  LIMIT_DECODED_BYTES: int(5_242_880, 1),
  LIMIT_RECORDS_PER_REQUEST: int(500, 1),
  LIMIT_PROPERTIES_PER_RECORD: int(500, 1),
  LIMIT_KEY_LENGTH: int(256, 1),
  LIMIT_VALUE_LENGTH: int(65_536, 1),
  LIMIT_ID_LENGTH: int(256, 1),
  LIMIT_DEPTH: int(10, 1),
  ENQUEUE_TIMEOUT_MS: int(2000, 1),
  ENQUEUE_MAX_BATCH_RECORDS: int(1000, 1),
  ENQUEUE_MAX_INFLIGHT: int(2, 1),
  ENQUEUE_LINGER_MS: int(1, 0),
  REDIS_ACK_REPLICAS: int(0, 0),
  REDIS_ACK_TIMEOUT_MS: int(500, 1),
  TOKEN_CACHE_TTL_MS: int(2000, 0),
  SEGMENT_CLOCK_SKEW_SECONDS: int(60, 0),
  RETRY_AFTER_SECONDS: int(5, 1),
  SHUTDOWN_TIMEOUT_MS: int(10_000, 0),
  DELIVERY_THREAD: bool(true),
  HISTORY_MAX_API_DELAY_MS: int(40, 0),
  DELIVERY_LEASE_MS: int(15_000, 100),
  DELIVERY_DISCOVER_INTERVAL_MS: int(2000, 10),
  DELIVERY_BACKOFF_BASE_MS: int(500, 1),
  DELIVERY_BACKOFF_MAX_MS: int(60_000, 1),
  DELIVERY_MAX_RECORD_ATTEMPTS: int(10, 1),
  DELIVERY_CONFIG_RECHECK_MS: int(30_000, 10),
  DELIVERY_WRITE_TIMEOUT_MS: int(600_000, 10),
  DELIVERY_SAMPLE_MS: int(60_000, 1000),
  ROUTER_LOCK_MS: int(10_000, 100),
  DESTINATION_REDIS_CAP_RECORDS: int(100_000, 2),
  DESTINATION_SPILL_FRAME_RECORDS: int(5000, 1),
  REDIS_MAXMEMORY_BYTES: z.coerce.number().int().min(1_048_576).optional(),
  REDIS_MEMORY_WARN_PERCENT: int(80, 1).pipe(z.number().max(99)),
  REDIS_MEMORY_HIGH_PERCENT: int(90, 1).pipe(z.number().max(99)),
  REDIS_MEMORY_RESUME_PERCENT: int(85, 1).pipe(z.number().max(99)),
  REDIS_MEMORY_SPILL_PERCENT: int(60, 1).pipe(z.number().max(99)),
  REDIS_MEMORY_SAMPLE_MS: int(1000, 50),
  REQUEST_HISTORY_SIZE: int(1000, 0),
  REQUEST_HISTORY_ENTRY_BYTES: int(1024, 256),
  UNKNOWN_TOKEN_HISTORY_SIZE: int(1000, 0),
  UNKNOWN_TOKEN_HISTORY_PER_MINUTE: int(60, 0),
  REQUEST_HISTORY_ACCEPTED_PER_SECOND: int(100, 0),
  TRAFFIC_FLUSH_MS: int(5000, 50),
  WAREHOUSE_MEMORY_MB: int(128, 16),
  WAREHOUSE_MEMORY_MAX_MB: int(1024, 16),
  WAREHOUSE_TEMP_DIR: z.string().optional(),
  ARCHIVE_DIR: z.string().optional(),
});

/** Every environment variable Tributary reads (compose.yaml and .env.example are checked against it). */
export const ENV_VARIABLES: readonly string[] = Object.keys(EnvSchema.shape);

export interface Limits {
  /** Bytes on the wire (Content-Length), compressed or not. Default 1 MiB. */
  requestBytes: number;
  /** Bytes of the request line and headers together: bounds a GET's URL, `data=` included. Default 64 KiB. */
  headerBytes: number;
  /** Bytes after gzip/deflate decoding; reading stops at this count, so a gzip bomb costs no memory. Default 5 MiB. */
  decodedBytes: number;
  /** Records in one request (JSON array). Default 500. */
  recordsPerRequest: number;
  /** Free-form top-level properties of one record. Default 500. */
  propertiesPerRecord: number;
  /** Characters in a property name, at any depth. Default 256. */
  keyLength: number;
  /** Characters in a string value, at any depth. Default 65 536. */
  valueLength: number;
  /** Characters in `_uid`, `_sid` and `_event`. Default 256. */
  idLength: number;
  /** Nesting depth of objects and arrays inside a property value. Default 10. */
  depth: number;
}

export interface Config {
  port: number;
  host: string;
  /**
   * Processes serving the HTTP API in roles `all` and `api`: node:cluster children sharing `PORT`,
   * under a primary that does the once-per-host work (src/boot/cluster.ts). `auto` in the environment:
   * os.availableParallelism(). Default 1: one process, no cluster.
   */
  apiProcesses: number;
  /** Base URL printed in integration views. Default `http://localhost:<PORT>`. */
  publicUrl: string;
  /** `PUBLIC_URL` was set: the relay's address for clients that must be told it (Segment's settings), not guessed from a request. */
  publicUrlConfigured: boolean;
  /** Redis to use; unset means the embedded redis-server under `DATA_DIR/redis` (src/core/redis/embedded-redis.ts). */
  redisUrl: string | undefined;
  /**
   * A Redis Cluster instead of one Redis: its seed nodes (`host:port,…`, or `redis[s]://` URLs for
   * credentials and TLS; src/core/redis/cluster-nodes.ts). Never set together with `redisUrl`. Default unset.
   */
  redisCluster: ClusterSeeds | undefined;
  /**
   * Prefix of the relay-wide Redis keys (trackers, tokens, history): `REDIS_PREFIX` as given with one
   * shard, `{REDIS_PREFIX}` with several (see src/core/redis/keyspace.ts).
   */
  redisPrefix: string;
  /** Where every key lives: the relay-wide prefix and one prefix per shard (`REDIS_SHARDS`, default 1, docs/operating.md, "Shards and partitions"). */
  keyspace: Keyspace;
  dataDir: string;
  configFile: string | undefined;
  /**
   * The key file whose keys encrypt the secrets kept in Redis (src/core/secrets; docs/operating.md,
   * "Secrets at rest"). Default `DATA_DIR/secrets-key`, made with a new key on first start; a file
   * named by SECRETS_KEY_FILE must exist.
   */
  secretsKeyFile: { path: string; configured: boolean };
  /**
   * Bearer token of the admin API (`/admin/api`). Unset: generated on first start and kept in
   * `DATA_DIR/admin-token` (mode 0600). Set it when several API processes must accept the same one.
   */
  adminToken: string | undefined;
  /** Console sessions end after `idleMs` without a request (CONSOLE_SESSION_IDLE_MINUTES, default 120) and `absoluteMs` after sign-in (CONSOLE_SESSION_MAX_HOURS, default 12). */
  sessions: { idleMs: number; absoluteMs: number };
  /** The audit log keeps `retentionDays` (AUDIT_RETENTION_DAYS, default 400) and at most `maxEntries` (AUDIT_MAX_ENTRIES, default 200 000). */
  audit: { retentionDays: number; maxEntries: number };
  logLevel: z.infer<typeof EnvSchema>['LOG_LEVEL'];
  /** Read the client IP from X-Forwarded-For. Default false. */
  trustProxy: boolean;
  limits: Limits;
  enqueue: {
    /** A request whose records are not in Redis after this long is answered 503. Default 2000 ms. */
    timeoutMs: number;
    /** Records coalesced into one Redis write at most. Default 1000. */
    maxBatchRecords: number;
    /** Redis writes under way at once; requests arriving meanwhile join the next write. Default 2. */
    maxInflight: number;
    /** How long a write waits for more requests to join it before it goes to Redis; a full batch goes at once. Default 1 ms. */
    lingerMs: number;
    /** Replicas that must have each write (Redis WAIT, once per group commit) before a 2xx. Default 0. */
    ackReplicas: number;
    /** How long a write waits for them before it is answered 503. Default 500 ms. */
    ackTimeoutMs: number;
  };
  /** How long a token lookup is cached in process; a revoked token stops working within this time. Default 2000 ms. */
  tokenCacheTtlMs: number;
  /**
   * `/v1` (Segment's API): a message's time is corrected by the device clock's error
   * (`receivedAt − sentAt`) only past this many milliseconds (`SEGMENT_CLOCK_SKEW_SECONDS`, default 60 s).
   */
  segmentClockSkewMs: number;
  retryAfterSeconds: number;
  shutdownTimeoutMs: number;
  history: {
    /** Requests kept per tracker, newest first; 0 keeps none. Default 1000. */
    size: number;
    /** Bytes of one kept request at most (its JSON); longer texts are cut to fit. Default 1024. */
    entryBytes: number;
    /** Requests with an unknown or revoked token kept for the whole relay; 0 keeps none. Default 1000. */
    unknownSize: number;
    /** Of those, how many each API process keeps per minute at most; the others are only counted. Default 60. */
    unknownPerMinute: number;
    /** Accepted requests of one tracker each API process keeps per second at most (refused ones are all kept); the others are only counted. Default 100. */
    acceptedPerSecond: number;
  };
  /**
   * How often each API process sends its per-minute record counts (the console's pictures over
   * time) to Redis; requests only add to a map in memory. Default 5000 ms.
   */
  trafficFlushMs: number;
  delivery: {
    /**
     * `npm start` (one process, role `all`): run routing, delivery and history in a worker thread
     * with its own event loop and heap, so their work never delays a live request (src/boot/delivery-thread.ts).
     * Default true; false runs them on the API's event loop, as before.
     */
    inThread: boolean;
    /**
     * In `npm start`, history (backfills, imports) waits while the API's event-loop delay, the 99th
     * percentile over the last half second, is above this (src/core/loop-delay.ts); live records
     * never wait for it. 0: history goes whatever the API's loop. Default 40 ms.
     */
    historyMaxApiDelayMs: number;
    /** Lease of a destination: another worker takes over this long after its holder dies. Default 15 s. */
    leaseMs: number;
    /** How often workers re-read trackers to start, stop or restart destinations. Default 2 s. */
    discoverIntervalMs: number;
    /** First retry delay of a failed write; doubles up to `backoffMaxMs`, with jitter. Default 500 ms. */
    backoffBaseMs: number;
    /** Default 60 s. */
    backoffMaxMs: number;
    /** A record answered "retry" this many times in a row is dead-lettered. Default 10. */
    maxRecordAttempts: number;
    /** While a destination is paused on a configuration error, it is tried again this often. Default 30 s. */
    configRecheckMs: number;
    /** A destination write still unfinished after this long is abandoned and retried with backoff. Default 10 min. */
    writeTimeoutMs: number;
    /** How often a held destination's backlog and lag are sampled for its pictures; the last sample of a minute is kept. Default 60 s. */
    sampleMs: number;
    /** An ingest job whose router stopped renewing its lock is taken back after this long. Default 10 s. */
    routerLockMs: number;
    /** Undelivered records of one destination kept in Redis; beyond, the oldest move to the disk spool. Default 100 000. */
    redisCapRecords: number;
    /** Records per spilled frame: one compressed block, one fsync, one Redis call. Default 5 000. */
    spillFrameRecords: number;
  };
  /** Redis memory: the limit, the watermarks, the sampling (src/core/redis/memory-budget.ts). */
  memory: MemoryBudgetConfig;
  /**
   * Where each tracker's archive of accepted records is kept (jobs/history/archiver.ts), a directory per
   * tracker partition. Every worker that may archive needs the same one (a shared volume) to keep
   * one history. Default `DATA_DIR/archive`.
   */
  archiveDir: string;
  /** What the local warehouse's DuckDB may take of the host (connectors/types.ts `EngineLimits`). */
  warehouse: {
    /**
     * DuckDB's memory limit for each open warehouse: the writer of each tracker delivering now, and
     * each `query` or `export` under way. Default 128 MiB (DuckDB's own default is 80 % of RAM).
     */
    memoryMb: number;
    /** How far a writer raises its own limit when a write runs out of memory, as a large warehouse with random ids can (WAREHOUSE_MEMORY_MAX_MB, default 1024; never below memoryMb). */
    maxMemoryMb: number;
    /** Where DuckDB spills what a batch or a query needs beyond the limit. Default `DATA_DIR/tmp/duckdb`. */
    tempDirectory: string;
  };
}

export interface MemoryBudgetConfig {
  /**
   * The Redis memory limit to budget against. Unset: Redis's own `maxmemory` (from INFO memory);
   * set it where Redis does not report one (some managed services), or to budget less. On a Redis
   * Cluster, the limit of each master. Default unset.
   */
  limitBytes: number | undefined;
  /** A warning is logged when Redis memory crosses this percent of the limit. Default 80. */
  warnPercent: number;
  /** Ingest (v3 and webhooks) is refused with 503 ERR_QUEUE_FULL at this percent. Default 90. */
  highPercent: number;
  /** Once refused, ingest is accepted again below this percent. Default 85. */
  resumePercent: number;
  /** From this percent on, every destination's backlog beyond 1 000 records goes to the disk spool. Default 60. */
  spillPercent: number;
  /** How often each process reads INFO memory. Default 1000 ms. */
  sampleMs: number;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Redis Cluster hashes a key by the text between its first `{` and the next `}`, when not empty. */
function holdsHashTag(prefix: string): boolean {
  const open = prefix.indexOf('{');
  return open >= 0 && prefix.indexOf('}', open + 1) > open + 1;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  // An empty variable (`REDIS_URL=` in an env file) means "not set", as shells and dotenv files intend.
  const parsed = EnvSchema.safeParse(Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== '')));
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`Invalid environment: ${issues}`);
  }
  const e = parsed.data;
  if (!(e.REDIS_MEMORY_RESUME_PERCENT <= e.REDIS_MEMORY_HIGH_PERCENT && e.REDIS_MEMORY_WARN_PERCENT <= e.REDIS_MEMORY_HIGH_PERCENT && e.REDIS_MEMORY_SPILL_PERCENT <= e.REDIS_MEMORY_HIGH_PERCENT)) {
    throw new ConfigError('Invalid environment: REDIS_MEMORY_WARN_PERCENT, REDIS_MEMORY_RESUME_PERCENT and REDIS_MEMORY_SPILL_PERCENT must not be above REDIS_MEMORY_HIGH_PERCENT');
  }
  if (e.REDIS_URL !== undefined && e.REDIS_CLUSTER_NODES !== undefined) {
    throw new ConfigError('Invalid environment: set REDIS_URL (one Redis) or REDIS_CLUSTER_NODES (a Redis Cluster), not both');
  }
  let redisCluster: ClusterSeeds | undefined;
  try {
    redisCluster = e.REDIS_CLUSTER_NODES === undefined ? undefined : parseClusterNodes(e.REDIS_CLUSTER_NODES);
  } catch (err) {
    if (err instanceof ClusterNodesError) throw new ConfigError(`Invalid environment: REDIS_CLUSTER_NODES: ${err.message}`);
    throw err;
  }
  let keyspace: Keyspace;
  try {
    keyspace = new Keyspace(e.REDIS_PREFIX, e.REDIS_SHARDS);
  } catch (err) {
    throw new ConfigError(`Invalid environment: REDIS_PREFIX: ${(err as Error).message}; set REDIS_PREFIX=${e.REDIS_PREFIX.replace(/[{}]/g, '')}`);
  }
  if (redisCluster && keyspace.shards === 1 && !holdsHashTag(e.REDIS_PREFIX)) {
    throw new ConfigError(
      `Invalid environment: on a Redis Cluster with REDIS_SHARDS=1 every key must share one slot, which REDIS_PREFIX=${e.REDIS_PREFIX} does not give them: ` +
        `set REDIS_PREFIX={${e.REDIS_PREFIX}}, or set REDIS_SHARDS to more than 1 to spread over the masters`,
    );
  }
  return Object.freeze({
    port: e.PORT,
    host: e.HOST,
    apiProcesses: e.API_PROCESSES.toLowerCase() === 'auto' ? os.availableParallelism() : Number(e.API_PROCESSES),
    publicUrl: (e.PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ''),
    publicUrlConfigured: e.PUBLIC_URL !== undefined,
    redisUrl: e.REDIS_URL,
    redisCluster,
    redisPrefix: keyspace.global,
    keyspace,
    dataDir: path.resolve(e.DATA_DIR),
    configFile: e.TRIBUTARY_CONFIG,
    secretsKeyFile: Object.freeze({ path: path.resolve(e.SECRETS_KEY_FILE ?? path.join(e.DATA_DIR, DEFAULT_KEY_FILE)), configured: e.SECRETS_KEY_FILE !== undefined }),
    adminToken: e.ADMIN_TOKEN,
    sessions: Object.freeze({ idleMs: e.CONSOLE_SESSION_IDLE_MINUTES * 60_000, absoluteMs: e.CONSOLE_SESSION_MAX_HOURS * 3_600_000 }),
    audit: Object.freeze({ retentionDays: e.AUDIT_RETENTION_DAYS, maxEntries: e.AUDIT_MAX_ENTRIES }),
    logLevel: e.LOG_LEVEL,
    trustProxy: e.TRUST_PROXY,
    limits: Object.freeze({
      requestBytes: e.LIMIT_REQUEST_BYTES,
      headerBytes: e.LIMIT_HEADER_BYTES,
      decodedBytes: e.LIMIT_DECODED_BYTES,
      recordsPerRequest: e.LIMIT_RECORDS_PER_REQUEST,
      propertiesPerRecord: e.LIMIT_PROPERTIES_PER_RECORD,
      keyLength: e.LIMIT_KEY_LENGTH,
      valueLength: e.LIMIT_VALUE_LENGTH,
      idLength: e.LIMIT_ID_LENGTH,
      depth: e.LIMIT_DEPTH,
    }),
    enqueue: Object.freeze({
      timeoutMs: e.ENQUEUE_TIMEOUT_MS,
      maxBatchRecords: e.ENQUEUE_MAX_BATCH_RECORDS,
      maxInflight: e.ENQUEUE_MAX_INFLIGHT,
      lingerMs: e.ENQUEUE_LINGER_MS,
      ackReplicas: e.REDIS_ACK_REPLICAS,
      ackTimeoutMs: e.REDIS_ACK_TIMEOUT_MS,
    }),
    tokenCacheTtlMs: e.TOKEN_CACHE_TTL_MS,
    segmentClockSkewMs: e.SEGMENT_CLOCK_SKEW_SECONDS * 1000,
    retryAfterSeconds: e.RETRY_AFTER_SECONDS,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    history: Object.freeze({
      size: e.REQUEST_HISTORY_SIZE,
      entryBytes: e.REQUEST_HISTORY_ENTRY_BYTES,
      unknownSize: e.UNKNOWN_TOKEN_HISTORY_SIZE,
      unknownPerMinute: e.UNKNOWN_TOKEN_HISTORY_PER_MINUTE,
      acceptedPerSecond: e.REQUEST_HISTORY_ACCEPTED_PER_SECOND,
    }),
    trafficFlushMs: e.TRAFFIC_FLUSH_MS,
    delivery: Object.freeze({
      inThread: e.DELIVERY_THREAD,
      historyMaxApiDelayMs: e.HISTORY_MAX_API_DELAY_MS,
      leaseMs: e.DELIVERY_LEASE_MS,
      discoverIntervalMs: e.DELIVERY_DISCOVER_INTERVAL_MS,
      backoffBaseMs: e.DELIVERY_BACKOFF_BASE_MS,
      backoffMaxMs: e.DELIVERY_BACKOFF_MAX_MS,
      maxRecordAttempts: e.DELIVERY_MAX_RECORD_ATTEMPTS,
      configRecheckMs: e.DELIVERY_CONFIG_RECHECK_MS,
      writeTimeoutMs: e.DELIVERY_WRITE_TIMEOUT_MS,
      sampleMs: e.DELIVERY_SAMPLE_MS,
      routerLockMs: e.ROUTER_LOCK_MS,
      redisCapRecords: e.DESTINATION_REDIS_CAP_RECORDS,
      spillFrameRecords: e.DESTINATION_SPILL_FRAME_RECORDS,
    }),
    archiveDir: path.resolve(e.ARCHIVE_DIR ?? path.join(e.DATA_DIR, 'archive')),
    warehouse: Object.freeze({
      memoryMb: e.WAREHOUSE_MEMORY_MB,
      maxMemoryMb: Math.max(e.WAREHOUSE_MEMORY_MAX_MB, e.WAREHOUSE_MEMORY_MB),
      tempDirectory: path.resolve(e.WAREHOUSE_TEMP_DIR ?? path.join(e.DATA_DIR, 'tmp', 'duckdb')),
    }),
    memory: Object.freeze({
      limitBytes: e.REDIS_MAXMEMORY_BYTES,
      warnPercent: e.REDIS_MEMORY_WARN_PERCENT,
      highPercent: e.REDIS_MEMORY_HIGH_PERCENT,
      resumePercent: e.REDIS_MEMORY_RESUME_PERCENT,
      spillPercent: e.REDIS_MEMORY_SPILL_PERCENT,
      sampleMs: e.REDIS_MEMORY_SAMPLE_MS,
    }),
  });
}
