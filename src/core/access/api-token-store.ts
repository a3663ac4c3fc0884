import { LuaScript } from '../redis/lua-script';
import { randomBytes } from 'node:crypto';
import * as z from 'zod';
import type { RedisClient } from '../redis/cluster';
import { tokenDigest, tokensEqual } from '../trackers/tokens';
import { accessKeys, type AccessKeys } from './keys';
import { INSTANCE_ROLES, TOKEN_SCOPES, TRACKER_ROLES } from './roles';

/**
 * Tokens for scripts and CI. The token is `tbp_<id>_<secret>` (personal) or `tbs_<id>_<secret>`
 * (service): the prefix and id are what lists show and what a leaked token is recognised by; only
 * the digest of the whole token is stored, so it is shown once, when made.
 */
export const TOKEN_KINDS = ['personal', 'service'] as const;
export type TokenKind = (typeof TOKEN_KINDS)[number];

const PREFIX: Record<TokenKind, string> = { personal: 'tbp', service: 'tbs' };
const TOKEN_TEXT = /^(tbp|tbs)_([A-Za-z0-9]{10})_([A-Za-z0-9_-]{43})$/;

/** The longest a token may live: a year and a day. A token that never expires is a token nobody remembers. */
export const MAX_TOKEN_DAYS = 366;

export const ApiTokenSchema = z.object({
  id: z.string(),
  kind: z.enum(TOKEN_KINDS),
  name: z.string().min(1).max(100),
  digest: z.string(),
  scopes: z.array(z.enum(TOKEN_SCOPES)).min(1),
  /** Only these trackers; absent: every tracker its grants reach. */
  trackers: z.array(z.string()).optional(),
  /** Personal: whose rights it narrows. */
  ownerId: z.string().optional(),
  /** Service: its own grants, kept whoever leaves. */
  grants: z.object({ role: z.enum(INSTANCE_ROLES), trackers: z.record(z.string(), z.enum(TRACKER_ROLES)).default({}) }).optional(),
  createdAt: z.string(),
  createdBy: z.string(),
  expiresAt: z.string(),
  revokedAt: z.string().optional(),
});
export type ApiToken = z.infer<typeof ApiTokenSchema>;

/** What lists show: a recognisable prefix instead of the digest, and the last use. */
export type ApiTokenView = Omit<ApiToken, 'digest'> & { prefix: string; lastUsedAt: string | null; state: 'active' | 'expired' | 'revoked' };

export function tokenState(t: ApiToken, now = Date.now()): ApiTokenView['state'] {
  if (t.revokedAt) return 'revoked';
  return Date.parse(t.expiresAt) <= now ? 'expired' : 'active';
}

export function looksLikeApiToken(text: string): boolean {
  return /^tb[ps]_/.test(text);
}

// Writes a token's new JSON if it is still what the caller read.
const SET_IF_SAME = new LuaScript(`
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1`);

/** How often a token's last use is written: a busy script does not write on every call. */
const LAST_USE_EVERY_MS = 60_000;

export class ApiTokenStore {
  private readonly keys: AccessKeys;
  private readonly lastWritten = new Map<string, number>();

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
  ) {
    this.keys = accessKeys(prefix);
  }

  /** Makes a token; the text is returned once and never stored. */
  async create(fields: Omit<ApiToken, 'id' | 'digest' | 'createdAt'>): Promise<{ token: string; record: ApiToken }> {
    const id = randomBytes(16).toString('base64').replace(/[^A-Za-z0-9]/g, '').slice(0, 10).padEnd(10, '0');
    const token = `${PREFIX[fields.kind]}_${id}_${randomBytes(32).toString('base64url')}`;
    const record = ApiTokenSchema.parse({ ...fields, id, digest: tokenDigest(token), createdAt: new Date().toISOString() });
    const added = await this.redis.hsetnx(this.keys.tokens, id, JSON.stringify(record));
    if (added !== 1) return this.create(fields);
    return { token, record };
  }

  /** The record of a presented token, whatever its state; undefined when it is no token of ours. */
  async find(text: string): Promise<ApiToken | undefined> {
    const m = TOKEN_TEXT.exec(text);
    if (!m) return undefined;
    const record = await this.get(m[2]!);
    if (!record || PREFIX[record.kind] !== m[1] || !tokensEqual(tokenDigest(text), record.digest)) return undefined;
    return record;
  }

  async get(id: string): Promise<ApiToken | undefined> {
    const json = await this.redis.hget(this.keys.tokens, id);
    return json === null ? undefined : ApiTokenSchema.parse(JSON.parse(json));
  }

  async list(): Promise<ApiTokenView[]> {
    const [all, used] = await Promise.all([this.redis.hvals(this.keys.tokens), this.redis.hgetall(this.keys.tokenUse)]);
    return all
      .map((json) => ApiTokenSchema.parse(JSON.parse(json)))
      .map((t) => view(t, used[t.id] ?? null))
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  }

  /** Marks a token revoked (it stays listed as such); returns it as it was, or undefined. */
  async revoke(id: string): Promise<ApiToken | undefined> {
    const before = await this.get(id);
    if (!before) return undefined;
    if (!before.revokedAt) await this.redis.hset(this.keys.tokens, id, JSON.stringify({ ...before, revokedAt: new Date().toISOString() }));
    return before;
  }

  /**
   * Takes a removed tracker out of every token: out of a service token's grants, and out of the
   * trackers a token is limited to (one limited to it alone then reaches nothing, rather than
   * everything). Returns the tokens changed, as they were and are.
   */
  async forgetTracker(trackerId: string): Promise<Array<{ before: ApiToken; after: ApiToken }>> {
    const changed: Array<{ before: ApiToken; after: ApiToken }> = [];
    for (const [id, json] of Object.entries(await this.redis.hgetall(this.keys.tokens))) {
      const before = ApiTokenSchema.parse(JSON.parse(json));
      const granted = before.grants !== undefined && Object.hasOwn(before.grants.trackers, trackerId);
      const limited = before.trackers?.includes(trackerId) === true;
      if (!granted && !limited) continue;
      const after = structuredClone(before);
      if (granted) delete after.grants!.trackers[trackerId];
      if (limited) after.trackers = after.trackers!.filter((t) => t !== trackerId);
      // Only if unchanged meanwhile: a token revoked at the same moment stays revoked.
      if ((await SET_IF_SAME.run(this.redis, 1, this.keys.tokens, id, json, JSON.stringify(after))) === 1) changed.push({ before, after });
    }
    return changed;
  }

  /** Forgets every token of a person who is removed. */
  async removeOwnedBy(personId: string): Promise<string[]> {
    const owned = (await this.redis.hvals(this.keys.tokens)).map((json) => ApiTokenSchema.parse(JSON.parse(json))).filter((t) => t.ownerId === personId);
    if (owned.length > 0) await this.redis.multi().hdel(this.keys.tokens, ...owned.map((t) => t.id)).hdel(this.keys.tokenUse, ...owned.map((t) => t.id)).exec();
    return owned.map((t) => t.id);
  }

  noteUse(id: string): void {
    const now = Date.now();
    if (now - (this.lastWritten.get(id) ?? 0) < LAST_USE_EVERY_MS) return;
    this.lastWritten.set(id, now);
    this.redis.hset(this.keys.tokenUse, id, new Date(now).toISOString()).catch(() => this.lastWritten.delete(id));
  }
}

export function view(t: ApiToken, lastUsedAt: string | null): ApiTokenView {
  const { digest: _digest, ...rest } = t;
  return { ...rest, prefix: `${PREFIX[t.kind]}_${t.id}`, lastUsedAt, state: tokenState(t) };
}
