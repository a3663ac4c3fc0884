import { useEffect, useRef, useState } from 'preact/hooks';
import { accessApi } from './access-api.js';
import { ApiError, messageOf } from './api.js';
import { Alert, Field, Spinner } from './components.js';
import { useLoad } from './hooks.js';

type Mode = 'password' | 'token' | 'first-admin';

/** Shortest password the server takes (NIST SP 800-63B); it checks again. */
export const MIN_PASSWORD = 12;

function signInMessage(err: unknown): string {
  if (err instanceof ApiError && err.status === 429) return `Too many failed sign-ins: try again${err.retryAfter ? ` in ${err.retryAfter} s` : ' later'}.`;
  return messageOf(err);
}

/** A form's busy flag and error, and the one way its submit runs. */
function useAttempt() {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const attempt = async (action: () => Promise<unknown>, done: () => void, onFail?: () => void) => {
    setBusy(true);
    setError(null);
    try {
      await action();
      done();
    } catch (err) {
      setError(signInMessage(err));
      onFail?.();
    } finally {
      setBusy(false);
    }
  };
  return { error, setError, busy, attempt };
}

/**
 * The sign-in page: e-mail and password; the admin token as break-glass; and, on a relay without
 * people, the admin token that names the first admin. Autocomplete values let password managers
 * file each credential under the right name.
 */
export function SignIn({ onSignedIn, expired }: { onSignedIn: () => void; expired: boolean }) {
  const setup = useLoad(accessApi.setup, 'setup');
  const [chosen, setChosen] = useState<Mode | null>(null);
  const firstAdminNeeded = setup.data?.firstAdminNeeded === true;
  const mode: Mode = chosen ?? (firstAdminNeeded ? 'first-admin' : 'password');

  return (
    <main id="main" class="login">
      <div class="card login-card">
        <h1>Tributary console</h1>
        {expired && <p class="notice">Your session has ended. Sign in again.</p>}
        <Alert message={setup.error} />
        {setup.loading && !setup.data ? (
          <Spinner />
        ) : mode === 'first-admin' ? (
          <FirstAdminForm onSignedIn={onSignedIn} />
        ) : mode === 'token' ? (
          <TokenForm onSignedIn={onSignedIn} />
        ) : (
          <PasswordForm onSignedIn={onSignedIn} />
        )}
        <p class="login-switch">
          {mode === 'password' && (
            <button type="button" class="button ghost small" onClick={() => setChosen('token')}>
              Use the admin token (break-glass)
            </button>
          )}
          {mode === 'token' && (
            <button type="button" class="button ghost small" onClick={() => setChosen(firstAdminNeeded ? 'first-admin' : 'password')}>
              {firstAdminNeeded ? 'Create the first admin instead' : 'Use e-mail and password'}
            </button>
          )}
        </p>
      </div>
    </main>
  );
}

function PasswordForm({ onSignedIn }: { onSignedIn: () => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const { error, busy, attempt } = useAttempt();
  const first = useRef<HTMLInputElement>(null);
  const secret = useRef<HTMLInputElement>(null);
  useEffect(() => first.current?.focus(), []);

  const submit = (e: Event) => {
    e.preventDefault();
    void attempt(() => accessApi.signIn(email.trim(), password), onSignedIn, () => secret.current?.select());
  };

  return (
    <form onSubmit={submit} noValidate aria-label="Sign in with e-mail and password">
      <Field label="E-mail">
        {(p) => <input {...p} ref={first} type="email" name="email" autoComplete="username" spellcheck={false} autoCapitalize="off" value={email} onInput={(e) => setEmail(e.currentTarget.value)} />}
      </Field>
      <Field label="Password">
        {(p) => <input {...p} ref={secret} type="password" name="password" autoComplete="current-password" value={password} onInput={(e) => setPassword(e.currentTarget.value)} />}
      </Field>
      <Alert message={error} />
      <button class="button primary" type="submit" disabled={busy || email.trim() === '' || password === ''}>
        {busy ? 'Signing in…' : 'Sign in'}
      </button>
    </form>
  );
}

const TOKEN_HINT = (
  <>
    Printed by the server at its first start, and kept in <code>DATA_DIR/admin-token</code> (or <code>ADMIN_TOKEN</code>). Every use is audited.
  </>
);

/** The admin token, kept for emergencies once people exist: it opens everything, and an admin can switch it off. */
function TokenForm({ onSignedIn }: { onSignedIn: () => void }) {
  const [token, setToken] = useState('');
  const { error, busy, attempt } = useAttempt();
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);

  const submit = (e: Event) => {
    e.preventDefault();
    void attempt(() => accessApi.signInWithToken(token.trim()), onSignedIn, () => input.current?.select());
  };

  return (
    <form onSubmit={submit} noValidate aria-label="Sign in with the admin token">
      {/* Lets password managers file the token under a name of its own. */}
      <input type="text" name="username" autoComplete="username" value="admin" readOnly hidden />
      <Field label="Admin token" hint={TOKEN_HINT}>
        {(p) => <input {...p} ref={input} type="password" autoComplete="current-password" value={token} onInput={(e) => setToken(e.currentTarget.value)} />}
      </Field>
      <Alert message={error} />
      <button class="button primary" type="submit" disabled={busy || token.trim() === ''}>
        {busy ? 'Signing in…' : 'Sign in'}
      </button>
    </form>
  );
}

/** A relay without people: whoever holds the admin token names the first admin, and is signed in as them. */
function FirstAdminForm({ onSignedIn }: { onSignedIn: () => void }) {
  const [token, setToken] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const { error, setError, busy, attempt } = useAttempt();
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);

  const create = (e: Event) => {
    e.preventDefault();
    if (token.trim() === '' || email.trim() === '') return setError('Give the admin token and the first admin’s e-mail.');
    if (password.length < MIN_PASSWORD) return setError(`The password needs at least ${MIN_PASSWORD} characters.`);
    void attempt(() => accessApi.createFirstAdmin(token.trim(), email.trim(), password), onSignedIn);
  };
  const tokenOnly = () => {
    if (token.trim() === '') return setError('Give the admin token.');
    void attempt(() => accessApi.signInWithToken(token.trim()), onSignedIn, () => input.current?.select());
  };

  return (
    <form onSubmit={create} noValidate aria-label="Create the first admin">
      <p class="hint">Nobody has an account on this relay yet. The admin token names the first admin, who then adds the others (People). The token stays a break-glass credential.</p>
      <Field label="Admin token" hint={TOKEN_HINT}>
        {(p) => <input {...p} ref={input} type="password" autoComplete="off" value={token} onInput={(e) => setToken(e.currentTarget.value)} />}
      </Field>
      <Field label="E-mail of the first admin">
        {(p) => <input {...p} type="email" name="email" autoComplete="username" spellcheck={false} autoCapitalize="off" value={email} onInput={(e) => setEmail(e.currentTarget.value)} />}
      </Field>
      <Field label="Password" hint={`At least ${MIN_PASSWORD} characters.`}>
        {(p) => <input {...p} type="password" name="new-password" autoComplete="new-password" value={password} onInput={(e) => setPassword(e.currentTarget.value)} />}
      </Field>
      <Alert message={error} />
      <div class="actions">
        <button class="button primary" type="submit" disabled={busy}>
          Create the first admin
        </button>
        <button class="button" type="button" disabled={busy} onClick={tokenOnly}>
          Sign in with the admin token only
        </button>
      </div>
    </form>
  );
}
