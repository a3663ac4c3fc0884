import { useCallback, useEffect, useState } from 'preact/hooks';
import { accessApi } from './access-api.js';
import { SessionContext } from './access.js';
import type { SessionInfo } from './access-types.js';
import { AccountMenu } from './account-menu.js';
import { AccountPage } from './account-page.js';
import { messageOf, onUnauthorized } from './api.js';
import { AuditPage } from './audit-page.js';
import { Alert, NoAccess, Spinner } from './components.js';
import { FirstAdminBanner } from './first-admin-banner.js';
import { SignIn } from './login.js';
import { PeoplePage } from './people-page.js';
import { navigate, useRoute, type Route } from './router.js';
import { TokensPage } from './tokens-page.js';
import { TrackerPage } from './tracker-page.js';
import { TrackersPage } from './trackers-page.js';
import { UnknownTokensPage } from './unknown-tokens-page.js';
import { WelcomePage } from './welcome-page.js';

type Phase = 'checking' | 'in' | 'out' | 'expired';

/** A screen's identity: a new one reads the session's rights again (an admin may have changed them meanwhile). */
function screenOf(route: Route): string {
  return route.page === 'tracker' ? `tracker:${route.trackerId}` : route.page;
}

export function App() {
  const [phase, setPhase] = useState<Phase>('checking');
  const [session, setSession] = useState<SessionInfo | null>(null);
  const [error, setError] = useState<string | null>(null);
  const route = useRoute();

  const refresh = useCallback(async () => {
    try {
      const s = await accessApi.whoami();
      setSession(s);
      setError(null);
      setPhase((p) => (s ? 'in' : p === 'in' ? 'expired' : 'out'));
    } catch (err) {
      setError(messageOf(err));
      setPhase((p) => (p === 'checking' ? 'out' : p));
    }
  }, []);

  useEffect(() => {
    void refresh();
    return onUnauthorized(() => setPhase((p) => (p === 'in' ? 'expired' : p)));
  }, []);

  const screen = screenOf(route);
  useEffect(() => {
    if (phase === 'in') void refresh();
  }, [screen]);

  if (route.page === 'welcome') {
    return (
      <WelcomePage
        code={route.code}
        onSignedIn={async () => {
          await refresh();
          navigate({ page: 'trackers' });
        }}
      />
    );
  }
  if (phase === 'checking') return <Spinner label="Connecting…" />;
  if (phase !== 'in' || !session) {
    return (
      <>
        <Alert message={error} />
        <SignIn expired={phase === 'expired'} onSignedIn={() => void refresh()} />
      </>
    );
  }

  const signOut = async () => {
    try {
      await accessApi.signOut();
    } finally {
      setSession(null);
      setPhase('out');
    }
  };

  return (
    <SessionContext.Provider value={session}>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <TopBar route={route} session={session} onSignOut={signOut} />
      <main id="main" tabIndex={-1}>
        {session.via === 'break-glass' && session.firstAdminNeeded && <FirstAdminBanner onSignedIn={refresh} />}
        <Screen route={route} admin={session.rights.admin} />
      </main>
    </SessionContext.Provider>
  );
}

function TopBar({ route, session, onSignOut }: { route: Route; session: SessionInfo; onSignOut: () => void }) {
  const admin = session.rights.admin;
  const link = (page: Route['page'], to: string, label: string) => (
    <a href={to} aria-current={route.page === page ? 'page' : undefined}>
      {label}
    </a>
  );
  return (
    <header class="topbar">
      <a class="brand" href="#/trackers">
        Tributary
      </a>
      <nav aria-label="Main">
        {link('trackers', '#/trackers', 'Trackers')}
        {link('tokens', '#/tokens', 'Tokens')}
        {admin && link('people', '#/people', 'People')}
        {admin && link('audit', '#/audit', 'Audit')}
        {admin && link('unknown-token', '#/requests/unknown-token', 'Unknown tokens')}
        <a href="/openapi.json" target="_blank" rel="noopener">
          API description
        </a>
      </nav>
      <AccountMenu onSignOut={onSignOut} />
    </header>
  );
}

function AdminOnly({ what }: { what: string }) {
  return <NoAccess title="Admins only">{what} is for admins. Ask one if you need it.</NoAccess>;
}

function Screen({ route, admin }: { route: Route; admin: boolean }) {
  switch (route.page) {
    case 'trackers':
      return <TrackersPage />;
    case 'tokens':
      return <TokensPage />;
    case 'account':
      return <AccountPage />;
    case 'people':
      return admin ? <PeoplePage /> : <AdminOnly what="The People page" />;
    case 'audit':
      return admin ? <AuditPage /> : <AdminOnly what="The audit log" />;
    case 'unknown-token':
      return admin ? <UnknownTokensPage /> : <AdminOnly what="The list of unknown tokens" />;
    case 'tracker':
      return <TrackerPage trackerId={route.trackerId} tab={route.tab} sourceId={route.sourceId} destinationId={route.destinationId} />;
    case 'welcome':
      return null;
  }
}
