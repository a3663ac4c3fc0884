import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, messageOf } from './api.js';
import { Alert, Field } from './components.js';

/** The admin token was printed at the first start and is kept in DATA_DIR/admin-token. */
export function Login({ onLoggedIn, expired }: { onLoggedIn: () => void; expired: boolean }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api.session.login(token.trim());
      onLoggedIn();
    } catch (err) {
      setError(err instanceof ApiError && err.status === 401 && !err.message ? 'That is not the admin token.' : messageOf(err));
      input.current?.select();
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" class="login">
      <form class="card login-card" onSubmit={submit} noValidate>
        <h1>Tributary console</h1>
        {expired && <p class="notice">Your session has ended. Sign in again.</p>}
        {/* Lets password managers file the token under a name. */}
        <input type="text" name="username" autoComplete="username" value="admin" readOnly hidden />
        <Field label="Admin token" hint={<>Printed by the server at its first start, and kept in <code>DATA_DIR/admin-token</code>.</>}>
          {(props) => <input {...props} ref={input} type="password" autoComplete="current-password" value={token} onInput={(e) => setToken(e.currentTarget.value)} />}
        </Field>
        <Alert message={error} />
        <button class="button primary" type="submit" disabled={busy || token.trim() === ''}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
