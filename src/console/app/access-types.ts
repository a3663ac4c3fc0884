/**
 * People, tokens, sessions and the audit log as the admin API answers them (docs/access.md),
 * mirrored for the browser; test/console/wire-types.ts fails the type check when they drift.
 */

export const INSTANCE_ROLES = ['admin', 'member'] as const;
export type InstanceRole = (typeof INSTANCE_ROLES)[number];

export const TRACKER_ROLES = ['viewer', 'editor'] as const;
export type TrackerRole = (typeof TRACKER_ROLES)[number];

export const TOKEN_SCOPES = ['read', 'write', 'payloads', 'admin'] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

export interface Actor {
  kind: 'person' | 'token' | 'break-glass' | 'cli' | 'config-file' | 'anonymous';
  id?: string;
  label: string;
}

export interface Person {
  id: string;
  email: string;
  name: string;
  role: InstanceRole;
  trackers: Record<string, TrackerRole>;
  /** False until the person sets one from an invitation. */
  hasPassword: boolean;
  epoch: number;
  createdAt: string;
  updatedAt: string;
  createdBy?: string;
}

/** `GET /admin/api/session`: who is signed in, and what they may do. */
export interface SessionInfo {
  via: 'session' | 'token' | 'break-glass';
  /** With the break-glass token only: the relay has no person yet. */
  firstAdminNeeded?: boolean;
  actor: Actor;
  person?: Person;
  rights: {
    admin: boolean;
    /** A member's role per tracker; empty for an admin, who is editor everywhere. */
    trackers: Record<string, TrackerRole>;
    scopes?: TokenScope[];
  };
}

/** A link to set one's password, for a new person or after a reset. */
export interface Invitation {
  url: string;
  code: string;
  expiresAt: string;
}

export interface ApiTokenView {
  id: string;
  /** `tbp_<id>` or `tbs_<id>`: how the token starts. */
  prefix: string;
  kind: 'personal' | 'service';
  name: string;
  scopes: TokenScope[];
  trackers?: string[];
  ownerId?: string;
  grants?: { role: InstanceRole; trackers: Record<string, TrackerRole> };
  createdAt: string;
  createdBy: string;
  expiresAt: string;
  revokedAt?: string;
  lastUsedAt: string | null;
  state: 'active' | 'expired' | 'revoked';
}

export interface AuditFieldChange {
  path: string;
  before?: unknown;
  after?: unknown;
}

export interface AuditEntry {
  id: string;
  at: string;
  actor: Actor;
  from?: string;
  action: string;
  target: Record<string, string>;
  changes: Array<{ object: string; fields: AuditFieldChange[] }>;
  outcome: 'ok' | 'refused' | 'failed';
  status?: number;
  reason?: string;
  /** Refusals of the same address left out before this one (a flood of bad credentials). */
  suppressed?: number;
}

export interface AuditQuery {
  limit?: number;
  before?: string;
  tracker?: string;
  actor?: string;
  outcome?: AuditEntry['outcome'];
}
