import type { ApiTokenView, AuditEntry, AuditQuery, Invitation, InstanceRole, Person, SessionInfo, TokenScope, TrackerRole } from './access-types.js';
import { ApiError, call } from './api.js';

const seg = encodeURIComponent;
/** Sign-in calls answer 401 for a wrong credential: an answer to show, not a session that ended. */
const quiet = { quiet401: true };

function queryOf(q: AuditQuery): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(q)) if (value !== undefined && value !== '') params.set(key, String(value));
  const text = params.toString();
  return text ? `?${text}` : '';
}

export interface PersonInput {
  email: string;
  name?: string;
  role: InstanceRole;
  trackers: Record<string, TrackerRole>;
}

export interface TokenInput {
  name: string;
  scopes: TokenScope[];
  trackers?: string[];
  expiresInDays?: number;
}

export interface ServiceTokenInput extends Omit<TokenInput, 'trackers'> {
  role?: 'admin';
  grants?: Record<string, TrackerRole>;
}

/** Signing in and out, people, tokens and the audit log (docs/access.md). */
export const accessApi = {
  /** Who is signed in; null when nobody (a 401 here is an answer, not an event). */
  async whoami(): Promise<SessionInfo | null> {
    try {
      return await call<SessionInfo>('GET', '/session', undefined, quiet);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return null;
      throw err;
    }
  },
  setup: () => call<{ firstAdminNeeded: boolean }>('GET', '/session/setup', undefined, quiet),
  signIn: (email: string, password: string) => call<void>('POST', '/session', { email, password }, quiet),
  /** The break-glass session of the admin token. */
  signInWithToken: (token: string) => call<void>('POST', '/session', { token }, quiet),
  /** On a relay without people: the admin token names the first admin, who is then signed in. */
  createFirstAdmin: (token: string, email: string, password: string) => call<{ person: Person }>('POST', '/session', { token, email, password }, quiet),
  signOut: () => call<void>('DELETE', '/session', undefined, quiet),
  /** Ends every session of the person; this browser gets a new one. */
  changePassword: (current: string, password: string) => call<void>('POST', '/session/password', { current, password }),
  invitation: (code: string) => call<{ email: string; name: string }>('GET', `/welcome/${seg(code)}`, undefined, quiet),
  acceptInvitation: (code: string, password: string) => call<void>('POST', `/welcome/${seg(code)}`, { password }, quiet),

  people: {
    list: async () => (await call<{ people: Person[] }>('GET', '/people')).people,
    /** Without a password: the answer holds the invitation to pass on. */
    add: (input: PersonInput & { password?: string }) => call<{ person: Person; invitation?: Invitation }>('POST', '/people', input),
    /** `trackers` replaces the grants as a whole. */
    update: (id: string, input: Partial<PersonInput>) => call<Person>('PATCH', `/people/${seg(id)}`, input),
    remove: (id: string) => call<{ removed: Person }>('DELETE', `/people/${seg(id)}`),
    resetPassword: async (id: string) => (await call<{ invitation: Invitation }>('POST', `/people/${seg(id)}/reset-password`)).invitation,
  },

  tokens: {
    /** One's own; an admin's: everyone's. */
    list: async () => (await call<{ tokens: ApiTokenView[] }>('GET', '/tokens')).tokens,
    /** The token is in this answer only. */
    create: (input: TokenInput) => call<{ token: string; view: ApiTokenView }>('POST', '/tokens', input),
    createService: (input: ServiceTokenInput) => call<{ token: string; view: ApiTokenView }>('POST', '/service-tokens', input),
    revoke: (id: string) => call<{ revoked: ApiTokenView }>('DELETE', `/tokens/${seg(id)}`),
  },

  breakGlass: {
    get: async () => (await call<{ enabled: boolean }>('GET', '/access/break-glass')).enabled,
    set: (enabled: boolean) => call<{ enabled: boolean }>('PUT', '/access/break-glass', { enabled }),
  },

  audit: {
    list: async (q: AuditQuery) => (await call<{ entries: AuditEntry[] }>('GET', `/audit${queryOf(q)}`)).entries,
    /** A tracker's entries, for its editors. */
    ofTracker: async (id: string, q: AuditQuery) => (await call<{ entries: AuditEntry[] }>('GET', `/trackers/${seg(id)}/audit${queryOf(q)}`)).entries,
    /** JSON lines, oldest first: a download the cookie authorizes. */
    exportUrl: '/admin/api/audit/export',
  },
};
