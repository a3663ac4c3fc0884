import { useRef, useState } from 'preact/hooks';
import { accessApi } from './access-api.js';
import { useSession, whoLabel } from './access.js';
import { rightsText } from './account-menu.js';
import { Alert, Field, Status } from './components.js';
import { useFormErrors } from './form-errors.js';
import { MIN_PASSWORD } from './login.js';
import { usePageTitle } from './page-title.js';

/** Who is signed in, and (a person) a new password: every other session of theirs ends. */
export function AccountPage() {
  usePageTitle('Your account');
  const session = useSession();
  return (
    <div class="page">
      <h1 tabIndex={-1} data-autofocus>
        Your account
      </h1>
      <section class="card" aria-labelledby="whoami-heading">
        <h2 id="whoami-heading">{whoLabel(session)}</h2>
        {session.person?.name && <p>{session.person.name}</p>}
        <p>{rightsText(session)}</p>
      </section>
      {session.person ? (
        <ChangePassword email={session.person.email} />
      ) : (
        <p class="hint">The break-glass admin token has no password: it is DATA_DIR/admin-token or ADMIN_TOKEN on the server.</p>
      )}
    </div>
  );
}

function ChangePassword({ email }: { email: string }) {
  const [current, setCurrent] = useState('');
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const [status, setStatus] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  const errors = useFormErrors(form);

  const submit = async (e: Event) => {
    e.preventDefault();
    setStatus(null);
    if (password.length < MIN_PASSWORD) return errors.setFields({ password: `At least ${MIN_PASSWORD} characters.` });
    if (again !== password) return errors.setFields({ again: 'The two passwords differ.' });
    setBusy(true);
    errors.clear();
    try {
      await accessApi.changePassword(current, password);
      setCurrent('');
      setPassword('');
      setAgain('');
      setStatus('Password changed. Your sessions elsewhere have ended; this one goes on.');
    } catch (err) {
      errors.fail(err, (field) => (field === 'current' || field === 'password' ? field : undefined));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="card" aria-labelledby="password-heading">
      <h2 id="password-heading">Change password</h2>
      <form ref={form} onSubmit={submit} noValidate aria-label="Change password">
        <input type="email" name="email" autoComplete="username" value={email} readOnly hidden />
        <Field label="Current password" error={errors.fields.current}>
          {(p) => <input {...p} type="password" autoComplete="current-password" value={current} onInput={(e) => setCurrent(e.currentTarget.value)} />}
        </Field>
        <Field label="New password" hint={`At least ${MIN_PASSWORD} characters.`} error={errors.fields.password}>
          {(p) => <input {...p} type="password" autoComplete="new-password" value={password} onInput={(e) => setPassword(e.currentTarget.value)} />}
        </Field>
        <Field label="Repeat the new password" error={errors.fields.again}>
          {(p) => <input {...p} type="password" autoComplete="new-password" value={again} onInput={(e) => setAgain(e.currentTarget.value)} />}
        </Field>
        <Alert message={errors.form} />
        <div class="actions">
          <button class="button primary" type="submit" disabled={busy}>
            {busy ? 'Changing…' : 'Change password'}
          </button>
          <Status message={status} />
        </div>
      </form>
    </section>
  );
}
