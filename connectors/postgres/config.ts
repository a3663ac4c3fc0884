import * as z from 'zod';

export const SSL_MODES = ['disable', 'require', 'verify-ca', 'verify-full'] as const;
export type SslMode = (typeof SSL_MODES)[number];

/** A PostgreSQL identifier as Tributary creates it: lower case, so that it needs no quotes in queries. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Text that may arrive as a number: the CLI reads `--setting password=1234` as JSON, so a numeric
 * password, role or database name (or a config file's unquoted one) is taken as its digits.
 */
const text = <T extends z.ZodType>(schema: T) => z.preprocess((value) => (typeof value === 'number' && Number.isFinite(value) ? String(value) : value), schema);

const Fields = z.strictObject({
  /**
   * A connection string (`postgres://user:password@host:5432/database?sslmode=require`), as the
   * provider's console gives it. When saved it is split into the settings below (which it fills
   * only where they are not given), so that the password is kept as a secret of its own.
   */
  url: z
    .string()
    .optional()
    .describe('A connection string, e.g. postgres://tributary:secret@db.example.com:5432/analytics?sslmode=require. Split into host, port, database, user, password and sslmode when saved.'),
  /** Default `localhost`. A path (`/var/run/postgresql`) is a Unix socket's directory. */
  host: text(z.string().min(1)).optional().describe('The server: a host name or address, or a Unix socket directory. Default: localhost.'),
  /** Default 5432. */
  port: z.number().int().min(1).max(65_535).optional().describe('Default: 5432.'),
  database: text(z.string().min(1).max(63)).optional().describe('The database the tables go in. Required (or in url).'),
  /** Default `postgres`. */
  user: text(z.string().min(1)).optional().describe('The role Tributary logs in as. Default: postgres.'),
  /** A secret: shown redacted, kept when a client sends the redacted marker back. */
  password: text(z.string()).optional().describe('The role’s password; none for trust or peer authentication.').meta({ format: 'password' }),
  /**
   * `disable` (default): no TLS; `require`: TLS without checking the certificate; `verify-ca`:
   * a certificate signed by a known authority (Node's, plus NODE_EXTRA_CA_CERTS); `verify-full`:
   * that, for this host name. As libpq's modes of the same names.
   */
  sslmode: z.enum(SSL_MODES).optional().describe('TLS: disable (default), require, verify-ca or verify-full, as libpq reads them. Managed services (RDS, Cloud SQL, Supabase, Neon) want require or stricter.'),
  /**
   * The schema that holds this tracker's `users`, `sessions` and `events`. Default: the tracker's
   * id, in lower case with other characters as `_` (`shop-eu` → `shop_eu`). Created when missing.
   */
  schema: z.string().regex(SCHEMA_NAME, 'a schema name of lower-case letters, digits and _, up to 63 characters, not starting with a digit').optional().describe('The schema for users, sessions and events. Default: the tracker id in lower case, e.g. shop_eu. Created when missing.'),
  /** Most property columns per table; PostgreSQL allows 1 600 columns a table, dropped ones included. Default 1000. */
  maxColumns: z.number().int().min(0).max(1500).optional().describe('Most property columns per table (PostgreSQL allows 1 600, dropped columns included); further properties stay in the _properties jsonb column. Default: 1000.'),
  /** Most records in one transaction. Default 5000. */
  batchRecords: z.number().int().min(1).max(50_000).optional().describe('Most records written in one transaction. Default: 5000.'),
  /** A statement running longer is cancelled and the batch retried. Default 60 000 ms. */
  statementTimeoutMs: z.number().int().min(100).max(3_600_000).optional().describe('A statement running longer than this is cancelled and the batch retried. Default: 60000 (60 s).'),
});

type Fields = z.infer<typeof Fields>;

/** The connection string's parts, for the settings it does not name. */
function splitUrl(settings: Fields, ctx: z.RefinementCtx): Omit<Fields, 'url'> {
  const { url, ...rest } = settings;
  if (url === undefined) return rest;
  let parsed: URL;
  try {
    // libpq takes an empty host (`postgres://user@/db?host=/var/run/postgresql`, a Unix socket); a URL does not.
    parsed = new URL(url.replace(/^(postgres(?:ql)?:\/\/[^/?#]*@)(?=[/?#]|$)/i, '$1localhost'));
  } catch {
    ctx.addIssue({ code: 'custom', path: ['url'], message: 'not a connection string: expected postgres://user:password@host:5432/database' });
    return rest;
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    ctx.addIssue({ code: 'custom', path: ['url'], message: `a connection string starts with postgres:// or postgresql://, not ${parsed.protocol}//` });
    return rest;
  }
  const out: Omit<Fields, 'url'> = { ...rest };
  // An IPv6 address is written in brackets in a URL ([::1]), without them to connect.
  const host = parsed.searchParams.get('host') ?? decodeURIComponent(parsed.hostname).replace(/^\[(.*)\]$/, '$1');
  if (out.host === undefined && host) out.host = host;
  if (out.port === undefined && parsed.port) out.port = Number(parsed.port);
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  if (out.database === undefined && database) out.database = database;
  if (out.user === undefined && parsed.username) out.user = decodeURIComponent(parsed.username);
  if (out.password === undefined && parsed.password) out.password = decodeURIComponent(parsed.password);
  const sslmode = parsed.searchParams.get('sslmode');
  if (out.sslmode === undefined && sslmode !== null) {
    // libpq's `prefer` and `allow` fall back to plain text when TLS fails; here TLS is asked for or not.
    const mode = sslmode === 'prefer' || sslmode === 'allow' ? 'disable' : sslmode;
    if ((SSL_MODES as readonly string[]).includes(mode)) out.sslmode = mode as SslMode;
    else ctx.addIssue({ code: 'custom', path: ['url'], message: `sslmode=${sslmode} is not one of ${SSL_MODES.join(', ')}` });
  }
  return out;
}

/** Settings of a `postgres` destination. */
export const PostgresSettingsSchema = Fields.transform(splitUrl)
  .superRefine((s, ctx) => {
    if (s.database === undefined) ctx.addIssue({ code: 'custom', path: ['database'], message: 'the database is required: give database, or a url that names one' });
  })
  .meta({ title: 'PostgreSQL', description: 'Tables users, sessions and events in a schema of a PostgreSQL database (RDS, Cloud SQL, Supabase, Neon or your own server).' });

export type PostgresSettings = z.infer<typeof PostgresSettingsSchema>;

export const DEFAULT_MAX_COLUMNS = 1000;
export const DEFAULT_BATCH_RECORDS = 5000;
export const DEFAULT_STATEMENT_TIMEOUT_MS = 60_000;

/** A tracker id as a schema name: lower case, other characters `_`, a leading digit prefixed. */
export function defaultSchema(trackerId: string): string {
  const name = trackerId.toLowerCase().replace(/[^a-z0-9_]/g, '_').slice(0, 63);
  return /^[0-9]/.test(name) ? `t_${name}`.slice(0, 63) : name;
}

/** The settings with every default filled in. */
export interface ResolvedPostgresSettings {
  host: string;
  port: number;
  database: string;
  user: string;
  password: string | undefined;
  sslmode: SslMode;
  schema: string;
  maxColumns: number;
  batchRecords: number;
  statementTimeoutMs: number;
}

export function resolveSettings(settings: PostgresSettings, trackerId: string): ResolvedPostgresSettings {
  return {
    host: settings.host ?? 'localhost',
    port: settings.port ?? 5432,
    database: settings.database!,
    user: settings.user ?? 'postgres',
    password: settings.password,
    sslmode: settings.sslmode ?? 'disable',
    schema: settings.schema ?? defaultSchema(trackerId),
    maxColumns: settings.maxColumns ?? DEFAULT_MAX_COLUMNS,
    batchRecords: settings.batchRecords ?? DEFAULT_BATCH_RECORDS,
    statementTimeoutMs: settings.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS,
  };
}

/** Where a destination writes, for messages: `user@host:port/database, schema s` (never the password). */
export function describeTarget(s: ResolvedPostgresSettings): string {
  return `${s.user}@${s.host}:${s.port}/${s.database}, schema ${s.schema}`;
}
