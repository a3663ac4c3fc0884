import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { SessionInfo, TrackerRole } from './access-types.js';

/**
 * The signed-in session, as `GET /admin/api/session` answered it: every screen draws itself from
 * its `rights`, hiding what the caller may not do. The API refuses it anyway; this only spares
 * people buttons that cannot work.
 */
export const SessionContext = createContext<SessionInfo | null>(null);

export function useSession(): SessionInfo {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession: outside the signed-in console');
  return session;
}

/** An admin is editor of every tracker; a member has the role its grants give, or none. */
export function roleOn(session: SessionInfo, trackerId: string): TrackerRole | undefined {
  if (session.rights.admin) return 'editor';
  return Object.hasOwn(session.rights.trackers, trackerId) ? session.rights.trackers[trackerId] : undefined;
}

/** Whether the session may change the tracker and read its records' payloads (an editor's rights). */
export function useCanEdit(trackerId: string): boolean {
  return roleOn(useSession(), trackerId) === 'editor';
}

export function useIsAdmin(): boolean {
  return useSession().rights.admin;
}

/** Who is signed in, as the account menu names them. */
export function whoLabel(session: SessionInfo): string {
  if (session.via === 'break-glass') return 'break-glass admin token';
  return session.person?.email ?? session.actor.label;
}
