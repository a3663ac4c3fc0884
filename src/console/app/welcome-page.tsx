import { useEffect, useRef, useState } from 'preact/hooks';
import { accessApi } from './access-api.js';
import { messageOf } from './api.js';
import { Alert, Field, Spinner } from './components.js';
import { useLoad } from './hooks.js';
import { MIN_PASSWORD } from './login.js';
import { usePageTitle } from './page-title.js';

/**
 * An invitation's page (`#/welcome/<code>`, the link an admin passed on): the person sets a
 * password and is signed in. A password reset sends the same kind of link.
 */
export function WelcomePage({ code, onSignedIn }: { code: string; onSignedIn: () => void | Promise<void> }) {
  usePageTitle('Welcome');
  const invite = useLoad(() => accessApi.invitation(code), code);
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const [errors, setErrors] = useState<{ password?: string; again?: string; form?: string }>({});
  const [busy, setBusy] = useState(false);
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => first.current?.focus(), [invite.data]);

  const submit = async (e: Event) => {
    e.preventDefault();
    if (password.length < MIN_PASSWORD) return setErrors({ password: `At least ${MIN_PASSWORD} characters.` });
    if (again !== password) return setErrors({ again: 'The two passwords differ.' });
    setBusy(true);
    setErrors({});
    try {
      await accessApi.acceptInvitation(code, password);
      await onSignedIn();
    } catch (err) {
      setErrors({ form: messageOf(err) });
    } finally {
      setBusy(false);
    }
  };

  const who = invite.data;
  return (
    <main id="main" class="login">
      <form class="card login-card" onSubmit={submit} noValidate aria-label="Set your password">
        <h1 tabIndex={-1} data-autofocus>
          Welcome to Tributary
        </h1>
        {invite.loading && !who && <Spinner />}
        {invite.error && (
          <>
            <Alert message={invite.error} />
            <p>
              <a href="#/trackers">Sign in</a> if your password is set already.
            </p>
          </>
        )}
        {who && (
          <>
            <p>
              Set a password for <strong data-testid="welcome-email">{who.email}</strong>
              {who.name ? ` (${who.name})` : ''}; you are signed in right after.
            </p>
            <input type="email" name="email" autoComplete="username" value={who.email} readOnly hidden />
            <Field label="New password" hint={`At least ${MIN_PASSWORD} characters, not containing your e-mail’s name.`} error={errors.password}>
              {(p) => <input {...p} ref={first} type="password" autoComplete="new-password" value={password} onInput={(e) => setPassword(e.currentTarget.value)} />}
            </Field>
            <Field label="Repeat the password" error={errors.again}>
              {(p) => <input {...p} type="password" autoComplete="new-password" value={again} onInput={(e) => setAgain(e.currentTarget.value)} />}
            </Field>
            <Alert message={errors.form} />
            <button class="button primary" type="submit" disabled={busy}>
              {busy ? 'Setting…' : 'Set password and sign in'}
            </button>
          </>
        )}
      </form>
    </main>
  );
}
