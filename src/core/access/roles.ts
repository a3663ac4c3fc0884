/**
 * Who may do what in the admin API (docs/access.md). Two instance roles, two tracker roles, four
 * token scopes; every admin route declares one {@link Permission}.
 */

/** `admin`: everything, on every tracker, and people, tokens and relay-wide settings. `member`: what its tracker grants say. */
export const INSTANCE_ROLES = ['admin', 'member'] as const;
export type InstanceRole = (typeof INSTANCE_ROLES)[number];

/** `viewer`: health, charts, destinations' state, the integration view. `editor`: also changes, and records' payloads. */
export const TRACKER_ROLES = ['viewer', 'editor'] as const;
export type TrackerRole = (typeof TRACKER_ROLES)[number];

/** What a token may be used for, within its owner's rights (or a service token's own grants). */
export const TOKEN_SCOPES = ['read', 'write', 'payloads', 'admin'] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

/**
 * What a route needs.
 * - `open`: nothing (signing in and out).
 * - `signed-in`: any principal (who am I, the connector types).
 * - `person`: a person's console session or the break-glass token, never an API token: a token
 *   cannot mint tokens or change a password.
 * - `tracker:view` / `tracker:edit` / `tracker:payloads`: on the tracker named by the route's `:id`.
 * - `relay:admin`: people, service tokens, the audit log, relay-wide settings, new trackers.
 */
export const PERMISSIONS = ['open', 'signed-in', 'person', 'tracker:view', 'tracker:edit', 'tracker:payloads', 'relay:admin'] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** Grants as stored: an instance role and, for a member, a role per tracker id. */
export interface Grants {
  role: InstanceRole;
  trackers: Record<string, TrackerRole>;
}

/** What a request's principal may do once its scopes and grants are combined. */
export interface Rights {
  admin: boolean;
  /** Role per tracker; an admin's is `editor` on every tracker, listed or not. */
  trackers: Readonly<Record<string, TrackerRole>>;
  /** Undefined: any scope (a person's session); else what a token was given. */
  scopes?: ReadonlySet<TokenScope>;
}

const SCOPE_OF: Partial<Record<Permission, TokenScope>> = {
  'signed-in': 'read',
  'tracker:view': 'read',
  'tracker:edit': 'write',
  'tracker:payloads': 'payloads',
  'relay:admin': 'admin',
};

export function rightsOf(grants: Grants, scopes?: ReadonlySet<TokenScope>): Rights {
  return { admin: grants.role === 'admin', trackers: grants.role === 'admin' ? {} : { ...grants.trackers }, ...(scopes ? { scopes } : {}) };
}

/** The role a principal holds on a tracker, if any. */
export function trackerRole(rights: Rights, trackerId: string): TrackerRole | undefined {
  if (rights.admin) return 'editor';
  return Object.hasOwn(rights.trackers, trackerId) ? rights.trackers[trackerId] : undefined;
}

export type Refusal = { ok: false; reason: 'scope'; scope: TokenScope } | { ok: false; reason: 'role'; message: string };

/** Whether `rights` allow `permission` (on `trackerId` for the tracker permissions). `open` and `person` are decided by the caller. */
export function check(rights: Rights, permission: Permission, trackerId?: string): { ok: true } | Refusal {
  const scope = SCOPE_OF[permission];
  if (scope && rights.scopes && !rights.scopes.has(scope)) return { ok: false, reason: 'scope', scope };
  switch (permission) {
    case 'open':
    case 'signed-in':
    case 'person':
      return { ok: true };
    case 'relay:admin':
      return rights.admin ? { ok: true } : { ok: false, reason: 'role', message: 'Only an admin may do this.' };
    case 'tracker:view':
    case 'tracker:edit':
    case 'tracker:payloads': {
      const role = trackerId === undefined ? undefined : trackerRole(rights, trackerId);
      if (role === undefined) return { ok: false, reason: 'role', message: `You have no role on tracker ${trackerId ?? '(none named)'}.` };
      if (permission !== 'tracker:view' && role !== 'editor') return { ok: false, reason: 'role', message: `A viewer of tracker ${trackerId} may look, not change or read records; an editor may.` };
      return { ok: true };
    }
  }
}

/** The rights of a token: its grants (a person's current ones, or a service token's own), narrowed to its scopes and trackers. */
export function narrow(grants: Grants, scopes: readonly TokenScope[], trackers?: readonly string[]): Rights {
  const base = rightsOf(grants, new Set(scopes));
  if (trackers === undefined) return base;
  // A token limited to some trackers is no admin: it sees those trackers with its owner's role on them.
  const limited: Record<string, TrackerRole> = {};
  for (const id of trackers) {
    const role = trackerRole(base, id);
    if (role) limited[id] = role;
  }
  return { admin: false, trackers: limited, scopes: base.scopes };
}
