import { useState } from 'preact/hooks';
import { accessApi } from './access-api.js';
import { messageOf } from './api.js';
import { Alert, Field } from './components.js';
import { MIN_PASSWORD } from './login.js';

/**
 * Signed in with the admin token on a relay without people: offers to create the first admin, and
 * signs in as them (the token stays a break-glass credential).
 */
export function FirstAdminBanner({ onSignedIn }: { onSignedIn: () => Promise<void> }) {
  const [open, setOpen] = useState(false);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    if (email.trim() === '') return setError('Give the first admin’s e-mail.');
    if (password.length < MIN_PASSWORD) return setError(`The password needs at least ${MIN_PASSWORD} characters.`);
    setBusy(true);
    setError(null);
    try {
      await accessApi.people.add({ email: email.trim(), role: 'admin', trackers: {}, password });
      await accessApi.signIn(email.trim(), password);
      await onSignedIn();
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="notice banner" aria-labelledby="first-admin-heading" data-testid="first-admin-banner">
      <h2 id="first-admin-heading">Nobody has an account yet</h2>
      <p>You are signed in with the admin token. Create the first admin: they sign in with an e-mail and a password, add the others, and the token stays for emergencies.</p>
      {!open ? (
        <button type="button" class="button small" onClick={() => setOpen(true)}>
          Create the first admin…
        </button>
      ) : (
        <form onSubmit={submit} noValidate aria-label="Create the first admin">
          <div class="field-row">
            <Field label="E-mail of the first admin">
              {(p) => <input {...p} type="email" autoComplete="username" spellcheck={false} autoCapitalize="off" value={email} onInput={(e) => setEmail(e.currentTarget.value)} />}
            </Field>
            <Field label="Password" hint={`At least ${MIN_PASSWORD} characters.`}>
              {(p) => <input {...p} type="password" autoComplete="new-password" value={password} onInput={(e) => setPassword(e.currentTarget.value)} />}
            </Field>
          </div>
          <Alert message={error} />
          <div class="actions">
            <button class="button primary" type="submit" disabled={busy}>
              Create and sign in as them
            </button>
            <button class="button ghost" type="button" onClick={() => setOpen(false)}>
              Cancel
            </button>
          </div>
        </form>
      )}
    </section>
  );
}
