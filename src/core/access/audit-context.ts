import { AsyncLocalStorage } from 'node:async_hooks';
import { diff, type FieldChange } from './audit-diff';

/** Who did something: a person, a token, the break-glass admin token, or an operator's command line or config file. */
export interface Actor {
  kind: 'person' | 'token' | 'break-glass' | 'cli' | 'config-file' | 'anonymous';
  /** The person's or token's id. */
  id?: string;
  /** What an auditor reads: an e-mail, `tbs_Ab12… (deploys)`, `cli root@host`. */
  label: string;
}

/** What one action changed in one stored object. */
export interface ObjectChange {
  /** e.g. `tracker shop`, `person p_…`, `token tbs_…`, `setting break-glass`. */
  object: string;
  fields: FieldChange[];
}

interface AuditScope {
  /** Read when a change is noted: an HTTP request learns its actor once its credential is checked. */
  readonly who: { actor: Actor };
  changes: ObjectChange[];
}

const scopes = new AsyncLocalStorage<AuditScope>();

/**
 * Runs `fn` as `actor`: every store that saves something inside it notes the change here
 * ({@link noteChange}), and whoever opened the scope writes one audit entry for the whole action
 * with what was collected (the admin API per request, the CLI per command, the config file per sync).
 */
export async function runAudited<T>(who: { actor: Actor }, fn: () => Promise<T>): Promise<{ result?: T; error?: unknown; changes: ObjectChange[] }> {
  const scope: AuditScope = { who, changes: [] };
  try {
    const result = await scopes.run(scope, fn);
    return { result, changes: scope.changes };
  } catch (error) {
    return { error, changes: scope.changes };
  }
}

/** The actor of the action in progress, if it is audited. */
export function currentActor(): Actor | undefined {
  return scopes.getStore()?.who.actor;
}

/** Records what a save changed, when an audited action is in progress (deliveries and other internal saves are not). */
export function noteChange(object: string, before: unknown, after: unknown): void {
  const scope = scopes.getStore();
  if (!scope) return;
  const fields = diff(before, after);
  if (fields.length > 0) scope.changes.push({ object, fields });
}
