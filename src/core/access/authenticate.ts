import { tokensEqual } from '../trackers/tokens';
import type { ApiToken, ApiTokenStore } from './api-token-store';
import type { Actor } from './audit-context';
import type { BreakGlass } from './break-glass';
import { grantsOf, type PeopleStore, type Person } from './people-store';
import { narrow, rightsOf, type Rights } from './roles';
import { BREAK_GLASS_SUBJECT, type SessionStore } from './session-store';

/** Who is asking, and what they may do. */
export interface Principal {
  actor: Actor;
  rights: Rights;
  /** A person's console session, an API token, or the break-glass admin token (as bearer or console session). */
  via: 'session' | 'token' | 'break-glass';
  /** The person behind a session or a personal token. */
  person?: Person;
  token?: ApiToken;
}

export type AuthFailure = { ok: false; reason: 'unknown' | 'expired' | 'revoked' | 'break-glass-off' | 'owner-gone'; message: string; actor?: Actor };

export interface AuthenticatorDeps {
  people: PeopleStore;
  sessions: SessionStore;
  tokens: ApiTokenStore;
  breakGlass: BreakGlass;
  adminToken: string;
}

export const BREAK_GLASS_ACTOR: Actor = { kind: 'break-glass', label: 'break-glass admin token' };

const ALL: Rights = { admin: true, trackers: {} };

export function personActor(p: Person): Actor {
  return { kind: 'person', id: p.id, label: p.email };
}

export function tokenActor(t: ApiToken): Actor {
  return { kind: 'token', id: t.id, label: `${t.kind === 'personal' ? 'tbp' : 'tbs'}_${t.id} (${t.name})` };
}

/**
 * Resolves a bearer credential or a console session to a principal, reading the current state of
 * people and tokens from Redis on every request: a revocation, a removal or a demotion made by any
 * process holds for the very next request of every other one.
 */
export class Authenticator {
  constructor(private readonly deps: AuthenticatorDeps) {}

  isAdminToken(text: string): boolean {
    return tokensEqual(text, this.deps.adminToken);
  }

  async breakGlass(): Promise<{ ok: true; principal: Principal } | AuthFailure> {
    if (!(await this.deps.breakGlass.enabled())) return { ok: false, reason: 'break-glass-off', message: 'The admin token is switched off on this relay: sign in as a person (an admin switches it on with `tributary access break-glass on`).', actor: BREAK_GLASS_ACTOR };
    return { ok: true, principal: { actor: BREAK_GLASS_ACTOR, rights: ALL, via: 'break-glass' } };
  }

  async bearer(text: string): Promise<{ ok: true; principal: Principal } | AuthFailure> {
    if (this.isAdminToken(text)) return this.breakGlass();
    const token = await this.deps.tokens.find(text);
    if (!token) return { ok: false, reason: 'unknown', message: 'That is no token of this relay: send Authorization: Bearer <a personal or service token, or the admin token>.' };
    const actor = tokenActor(token);
    if (token.revokedAt) return { ok: false, reason: 'revoked', message: `Token ${actor.label} was revoked at ${token.revokedAt}.`, actor };
    if (Date.parse(token.expiresAt) <= Date.now()) return { ok: false, reason: 'expired', message: `Token ${actor.label} expired at ${token.expiresAt}.`, actor };
    let person: Person | undefined;
    let rights: Rights;
    if (token.kind === 'personal') {
      person = token.ownerId ? await this.deps.people.get(token.ownerId) : undefined;
      if (!person) return { ok: false, reason: 'owner-gone', message: `Token ${actor.label} belonged to a person who is no longer here.`, actor };
      rights = narrow(grantsOf(person), token.scopes, token.trackers);
    } else {
      rights = narrow(token.grants ?? { role: 'member', trackers: {} }, token.scopes, token.trackers);
    }
    this.deps.tokens.noteUse(token.id);
    return { ok: true, principal: { actor, rights, via: 'token', token, ...(person ? { person } : {}) } };
  }

  async session(id: string): Promise<{ ok: true; principal: Principal } | AuthFailure> {
    const session = await this.deps.sessions.use(id);
    if (!session) return { ok: false, reason: 'expired', message: 'Your console session has ended; sign in again.' };
    if (session.subject === BREAK_GLASS_SUBJECT) return this.breakGlass();
    const person = await this.deps.people.get(session.subject);
    if (!person || person.epoch !== session.epoch) {
      await this.deps.sessions.end(id);
      return { ok: false, reason: 'expired', message: 'Your console session has ended (your password or role changed); sign in again.' };
    }
    return { ok: true, principal: { actor: personActor(person), rights: rightsOf(grantsOf(person)), via: 'session', person } };
  }
}
