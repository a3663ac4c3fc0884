import { useRef, useState } from 'preact/hooks';
import { accessApi } from './access-api.js';
import { useSession } from './access.js';
import type { InstanceRole, Invitation } from './access-types.js';
import { api, messageOf } from './api.js';
import { Alert, Field, Spinner, Status } from './components.js';
import { useFormErrors } from './form-errors.js';
import { GrantsPicker, RoleField, type Grants } from './grants-picker.js';
import { useLoad } from './hooks.js';
import { usePageTitle } from './page-title.js';
import { InvitationNotice, PersonItem } from './person-item.js';
import type { Tracker } from './types.js';

/** An invitation is answered in another browser: the list shows it within a few seconds. */
const REFRESH_MS = 5000;

/** People (admins only): who may sign in, with which role on which tracker. */
export function PeoplePage() {
  usePageTitle('People');
  const session = useSession();
  const people = useLoad(accessApi.people.list, 'people', REFRESH_MS);
  const trackers = useLoad(api.trackers.list, 'trackers');
  const known = trackers.data ?? [];

  return (
    <div class="page">
      <h1 tabIndex={-1} data-autofocus>
        People
      </h1>
      <section class="card" aria-labelledby="people-heading">
        <h2 id="people-heading">Who may sign in</h2>
        <p class="hint">An admin may do everything; a member sees the trackers granted to it, as a viewer (health, charts, destinations’ state, the integration view) or an editor (also every change, and the records themselves).</p>
        <Alert message={people.error} />
        {!people.data ? (
          people.loading && <Spinner />
        ) : people.data.length === 0 ? (
          <p class="empty">Nobody yet: add the first admin below.</p>
        ) : (
          <ul class="destination-list" aria-label="People">
            {people.data.map((p) => (
              <PersonItem key={p.id} person={p} trackers={known} isMe={p.id === session.person?.id} onChanged={people.reload} />
            ))}
          </ul>
        )}
      </section>
      <AddPerson trackers={known} onAdded={people.reload} />
      <BreakGlassCard />
    </div>
  );
}

function AddPerson({ trackers, onAdded }: { trackers: Tracker[]; onAdded: () => Promise<void> }) {
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [role, setRole] = useState<InstanceRole>('member');
  const [grants, setGrants] = useState<Grants>({});
  const [added, setAdded] = useState<{ email: string; invitation?: Invitation } | null>(null);
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  const errors = useFormErrors(form);

  const submit = async (e: Event) => {
    e.preventDefault();
    if (email.trim() === '') return errors.setFields({ email: 'An e-mail address: the person signs in with it.' });
    setBusy(true);
    errors.clear();
    setAdded(null);
    try {
      const { person, invitation } = await accessApi.people.add({ email: email.trim(), name: name.trim(), role, trackers: role === 'admin' ? {} : grants });
      setAdded({ email: person.email, ...(invitation ? { invitation } : {}) });
      setEmail('');
      setName('');
      setGrants({});
      await onAdded();
    } catch (err) {
      errors.fail(err, (field) => (field === 'email' || field === 'name' ? field : undefined));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="card" aria-labelledby="add-person-heading">
      <h2 id="add-person-heading">Add a person</h2>
      {added?.invitation && <InvitationNotice invitation={added.invitation} email={added.email} />}
      <form ref={form} onSubmit={submit} noValidate aria-label="Add a person">
        <div class="field-row">
          <Field label="E-mail" required error={errors.fields.email}>
            {(p) => <input {...p} type="email" autoComplete="off" spellcheck={false} autoCapitalize="off" value={email} onInput={(e) => setEmail(e.currentTarget.value)} />}
          </Field>
          <Field label="Name (optional)" error={errors.fields.name}>
            {(p) => <input {...p} type="text" autoComplete="off" value={name} onInput={(e) => setName(e.currentTarget.value)} />}
          </Field>
          <RoleField value={role} onChange={setRole} />
        </div>
        {role === 'member' && <GrantsPicker trackers={trackers} value={grants} onChange={setGrants} />}
        <Alert message={errors.form} />
        <button class="button primary" type="submit" disabled={busy}>
          {busy ? 'Adding…' : 'Add person'}
        </button>
      </form>
    </section>
  );
}

/** The admin token: a break-glass credential once people exist, which an admin may switch off. */
function BreakGlassCard() {
  const state = useLoad(accessApi.breakGlass.get, 'break-glass');
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const toggle = async () => {
    setError(null);
    try {
      const { enabled } = await accessApi.breakGlass.set(!state.data);
      state.setData(enabled);
      setStatus(enabled ? 'The admin token works again.' : 'The admin token is refused from now on; `tributary access break-glass on` switches it back.');
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return (
    <section class="card" aria-labelledby="break-glass-heading">
      <h2 id="break-glass-heading">Admin token (break-glass)</h2>
      <p class="hint">The admin token (DATA_DIR/admin-token or ADMIN_TOKEN) opens everything, for emergencies; each use is in the audit log. Switched off, it is refused until the CLI switches it on again.</p>
      <Alert message={state.error ?? error} />
      {state.data !== undefined && (
        <div class="actions">
          <span class={`badge ${state.data ? 'warn' : 'ok'}`}>{state.data ? 'on' : 'off'}</span>
          <button type="button" class="button small" onClick={toggle}>
            {state.data ? 'Switch the admin token off' : 'Switch the admin token on'}
          </button>
          <Status message={status} />
        </div>
      )}
    </section>
  );
}
