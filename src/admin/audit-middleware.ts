import type { Context, Middleware } from 'koa';
import type { AuditLog } from '../core/access/audit-log';
import { runAudited, type ObjectChange } from '../core/access/audit-context';
import { tokenHint } from '../core/redact';
import type { Logger } from '../core/logger';
import { accessOf, anonymous, authenticate, forbidden, SAFE_METHODS, type AccessState } from './auth';
import type { Authenticator } from '../core/access/authenticate';
import type { GuardedRoutes } from './guarded-routes';

/** Route parameters that name what an action is about, by the name an auditor searches for. */
const TARGETS: Record<string, string> = { id: 'tracker', dest: 'destination', source: 'source', person: 'person', token: 'token' };

/** What an action was about: its route's parameters, else what it changed (a tracker made by POST /trackers). */
function targetOf(ctx: Context, changes: ObjectChange[]): Record<string, string> {
  const params = (ctx.params ?? {}) as Record<string, string | undefined>;
  const target: Record<string, string> = {};
  for (const [param, kind] of Object.entries(TARGETS)) if (params[param] !== undefined) target[kind] = kind === 'token' && params[param]!.length > 12 ? tokenHint(params[param]!) : params[param]!;
  for (const { object } of changes) {
    const [kind, id] = object.split(' ');
    if (kind && id && target[kind] === undefined) target[kind] = id;
  }
  return target;
}

/**
 * The route a request will run: the router runs the layers that match its path and method in the
 * order they were registered, and the first route's handler answers. (`ctx._matchedRoute` names
 * the layer running now, which for this middleware is the middleware itself.)
 */
function routeOf(ctx: Context): string | undefined {
  const layers = (ctx as unknown as { matched?: Array<{ path: string; methods: string[] }> }).matched ?? [];
  return layers.find((layer) => layer.methods.includes(ctx.method))?.path;
}

function statusOf(error: unknown): number {
  const status = (error as { status?: unknown } | undefined)?.status;
  return typeof status === 'number' ? status : 500;
}

/**
 * Entries of one kind per key and minute, written at most `perMinute` times; the rest are counted
 * into the next one written (`suppressed`). Refusals of callers without a valid credential (per
 * address): whoever floods the API with bad tokens cannot push real entries out of the capped log
 * at the speed of its requests. Reads by the break-glass token (per address and route): a console
 * left open on it polls every few seconds, and one entry a minute says as much.
 */
export class EntryThrottle {
  private readonly windows = new Map<string, { start: number; written: number; suppressed: number }>();

  constructor(private readonly perMinute: number) {}

  /** undefined: do not write; else the number of entries suppressed since the last one written. */
  admit(key: string, now = Date.now()): number | undefined {
    if (this.windows.size > 10_000) this.windows.clear();
    const w = this.windows.get(key);
    if (!w || now - w.start >= 60_000) {
      const suppressed = w?.suppressed ?? 0;
      this.windows.set(key, { start: now, written: 1, suppressed: 0 });
      return suppressed;
    }
    if (w.written >= this.perMinute) {
      w.suppressed++;
      return undefined;
    }
    w.written++;
    const suppressed = w.suppressed;
    w.suppressed = 0;
    return suppressed;
  }
}

export interface AccessControlDeps {
  routes: GuardedRoutes;
  authenticator: Authenticator;
  audit: AuditLog;
  logger: Logger;
  /** The router's prefix, left out of the actions the log names. */
  prefix: string;
}

/**
 * First in the admin router: refuses a route that declares no permission, checks the caller's
 * credential (the route's own guard then checks its rights), and writes the audit entry of every
 * change, every refusal and every use of the break-glass token, with what the stores reported
 * changing (audit-context.ts), before the answer leaves. An entry that Redis refuses is logged
 * whole instead, so no change goes unrecorded.
 */
export function createAccessControl(deps: AccessControlDeps): Middleware {
  const anonymousRefusals = new EntryThrottle(20);
  const breakGlassReads = new EntryThrottle(1);
  return async (ctx, next) => {
    const state: AccessState = { actor: anonymous(ctx) };
    (ctx.state as { access: AccessState }).access = state;
    const matched = routeOf(ctx) ?? ctx.path;
    const permission = deps.routes.permissionOf(ctx.method, matched);
    const { error, changes } = await runAudited(state, async () => {
      if (permission === undefined) throw forbidden('This route declares no permission, so it is refused to everyone.');
      if (permission !== 'open') await authenticate(ctx, deps.authenticator, state);
      await next();
    });
    const status = error === undefined ? ctx.status : statusOf(error);
    const refused = status === 401 || status === 403 || status === 429;
    const action = `${ctx.method} ${matched.startsWith(deps.prefix) ? matched.slice(deps.prefix.length) || '/' : matched}`;
    const safe = SAFE_METHODS.has(ctx.method) && changes.length === 0 && !refused;
    const suppressed = state.actor.kind === 'anonymous' && refused ? anonymousRefusals.admit(ctx.ip) : state.actor.kind === 'break-glass' && safe ? breakGlassReads.admit(`${ctx.ip} ${action}`) : 0;
    if ((!safe || state.actor.kind === 'break-glass') && suppressed !== undefined) {
      const entry = {
        actor: state.actor,
        from: ctx.ip,
        action,
        target: targetOf(ctx, changes),
        changes,
        outcome: status < 400 ? ('ok' as const) : refused ? ('refused' as const) : ('failed' as const),
        status,
        ...(error !== undefined ? { reason: (error as Error).message } : {}),
        ...(suppressed ? { suppressed } : {}),
      };
      try {
        await deps.audit.append(entry);
      } catch (err) {
        deps.logger.error({ audit: entry, err: (err as Error).message }, 'audit entry not written to Redis; kept in this log line');
      }
    }
    if (error !== undefined) throw error;
  };
}

export { accessOf };
