import { useEffect, useState } from 'preact/hooks';
import { api, messageOf, onUnauthorized } from './api.js';
import { Alert, Spinner } from './components.js';
import { Login } from './login.js';
import { useRoute } from './router.js';
import { TrackerPage } from './tracker-page.js';
import { TrackersPage } from './trackers-page.js';
import { UnknownTokensPage } from './unknown-tokens-page.js';

type SessionState = 'checking' | 'in' | 'out' | 'expired';

export function App() {
  const [session, setSession] = useState<SessionState>('checking');
  const [error, setError] = useState<string | null>(null);
  const route = useRoute();

  useEffect(() => {
    api.session
      .check()
      .then((ok) => setSession(ok ? 'in' : 'out'))
      .catch((err) => {
        setError(messageOf(err));
        setSession('out');
      });
    return onUnauthorized(() => setSession((s) => (s === 'in' ? 'expired' : s)));
  }, []);

  if (session === 'checking') return <Spinner label="Connecting…" />;
  if (session !== 'in') {
    return (
      <>
        <Alert message={error} />
        <Login expired={session === 'expired'} onLoggedIn={() => setSession('in')} />
      </>
    );
  }

  const logout = async () => {
    try {
      await api.session.logout();
    } finally {
      setSession('out');
    }
  };

  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <a class="brand" href="#/trackers">
          Tributary
        </a>
        <nav aria-label="Main">
          <a href="#/trackers" aria-current={route.page === 'trackers' ? 'page' : undefined}>
            Trackers
          </a>
          <a href="#/requests/unknown-token" aria-current={route.page === 'unknown-token' ? 'page' : undefined}>
            Unknown tokens
          </a>
          <a href="/openapi.json" target="_blank" rel="noopener">
            API description
          </a>
        </nav>
        <button type="button" class="button small ghost" onClick={logout}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        {route.page === 'trackers' ? <TrackersPage /> : route.page === 'unknown-token' ? <UnknownTokensPage /> : <TrackerPage trackerId={route.trackerId} tab={route.tab} sourceId={route.sourceId} destinationId={route.destinationId} />}
      </main>
    </>
  );
}
