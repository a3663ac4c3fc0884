import * as z from 'zod';
import type { RedisClient } from '../redis/cluster';
import type { Actor, ObjectChange } from './audit-context';
import { accessKeys } from './keys';
import { LuaScript } from '../redis/lua-script';

export const AUDIT_OUTCOMES = ['ok', 'refused', 'failed'] as const;

export interface AuditEntryInput {
  actor: Actor;
  /** The client's address, for what came over HTTP. */
  from?: string;
  /** `PATCH /trackers/:id/destinations/:dest`, `cli destinations add`, `config-file sync`. */
  action: string;
  /** What the action was about, by kind: `tracker`, `destination`, `source`, `person`, `token`, `setting`. */
  target: Record<string, string>;
  changes: ObjectChange[];
  outcome: (typeof AUDIT_OUTCOMES)[number];
  status?: number;
  /** Why it was refused or failed, in the words the caller got. */
  reason?: string;
  /** Refusals from the same address not written since the last entry (a flood, see src/admin/audit-middleware.ts). */
  suppressed?: number;
}

export interface AuditEntry extends AuditEntryInput {
  /** The stream id: when it was written, and its order. */
  id: string;
  at: string;
}

export interface AuditLimits {
  /** Entries older than this are trimmed. Default 400 days: a year's reviews with a margin. */
  retentionDays: number;
  /** At most this many entries (a flood of refused attempts cannot fill Redis). Default 200 000. */
  maxEntries: number;
}

export const DEFAULT_AUDIT_LIMITS: AuditLimits = { retentionDays: 400, maxEntries: 200_000 };

export const AuditQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  /** Older than this entry id (paging back). */
  before: z.string().regex(/^\d+-\d+$/, 'an entry id looks like 1718000000000-0').optional(),
  since: z.iso.datetime({ offset: true }).optional(),
  tracker: z.string().optional(),
  /** A person's or token's id, or a label's part (an e-mail). */
  actor: z.string().optional(),
  outcome: z.enum(AUDIT_OUTCOMES).optional(),
});
export type AuditQuery = z.infer<typeof AuditQuerySchema>;

function matches(e: AuditEntry, q: AuditQuery): boolean {
  if (q.tracker !== undefined && e.target.tracker !== q.tracker) return false;
  if (q.outcome !== undefined && e.outcome !== q.outcome) return false;
  if (q.actor !== undefined && e.actor.id !== q.actor && !e.actor.label.includes(q.actor)) return false;
  return true;
}

// Trims first: the script's first write frees memory, so Redis runs it even at its memory limit
// (src/core/redis/out-of-memory.ts, "Writes at the limit"), and a change made on a full Redis still
// gets its entry. The entry is a few hundred bytes; the trim keeps the stream within its bounds.
const APPEND = new LuaScript(`
redis.call('XTRIM', KEYS[1], 'MINID', '~', ARGV[1])
return redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', 'e', ARGV[3])`);

/** The audit log: one Redis stream, newest last, trimmed by age and by count as it is written. */
export class AuditLog {
  private readonly key: string;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
    private readonly limits: AuditLimits = DEFAULT_AUDIT_LIMITS,
  ) {
    this.key = accessKeys(prefix).audit;
  }

  async append(entry: AuditEntryInput): Promise<string> {
    const oldest = Date.now() - this.limits.retentionDays * 86_400_000;
    return (await APPEND.run(this.redis, 1, this.key, String(oldest), String(this.limits.maxEntries), JSON.stringify(entry))) as string;
  }

  /** Newest first, filtered; pages back with `before`. */
  async list(query: AuditQuery): Promise<AuditEntry[]> {
    const out: AuditEntry[] = [];
    let end = query.before ? `(${query.before}` : '+';
    const start = query.since ? String(Date.parse(query.since)) : '-';
    // Filters are applied as pages are read, so a rare tracker's entries are found past others'.
    for (let pages = 0; out.length < query.limit && pages < 50; pages++) {
      const page = (await this.redis.xrevrange(this.key, end, start, 'COUNT', 500)) as Array<[string, string[]]>;
      for (const [id, fields] of page) {
        const entry = parseEntry(id, fields);
        if (entry && matches(entry, query)) out.push(entry);
        if (out.length === query.limit) break;
      }
      if (page.length < 500) break;
      end = `(${page[page.length - 1]![0]}`;
    }
    return out;
  }

  /** Every entry since a time, oldest first, a page at a time (the JSON-lines export). */
  async *all(since?: string): AsyncGenerator<AuditEntry> {
    let start = since ? String(Date.parse(since)) : '-';
    for (;;) {
      const page = (await this.redis.xrange(this.key, start, '+', 'COUNT', 500)) as Array<[string, string[]]>;
      for (const [id, fields] of page) {
        const entry = parseEntry(id, fields);
        if (entry) yield entry;
      }
      if (page.length < 500) return;
      start = `(${page[page.length - 1]![0]}`;
    }
  }
}

function parseEntry(id: string, fields: string[]): AuditEntry | undefined {
  const at = fields.indexOf('e');
  if (at < 0 || fields[at + 1] === undefined) return undefined;
  const body = JSON.parse(fields[at + 1]!) as AuditEntryInput;
  return { id, at: new Date(Number(id.split('-')[0])).toISOString(), ...body };
}
