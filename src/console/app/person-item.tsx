import { useState } from 'preact/hooks';
import { accessApi } from './access-api.js';
import type { InstanceRole, Invitation, Person } from './access-types.js';
import { useAction } from './hooks.js';
import { Alert, ConfirmButton, CopyField, Field, Status } from './components.js';
import { formatTime } from './format.js';
import { GrantsPicker, grantsText, RoleField, type Grants } from './grants-picker.js';
import type { Tracker } from './types.js';

/** The link that sets a password, with a copy button: the admin passes it on (it is sent nowhere). */
export function InvitationNotice({ invitation, email }: { invitation: Invitation; email: string }) {
  return (
    <div class="notice success" data-testid="invitation">
      <p>
        Send this link to <strong>{email}</strong>: it sets a password, once, until {formatTime(invitation.expiresAt)}. It is shown only here.
      </p>
      <CopyField value={invitation.url} label={`Copy the invitation link of ${email}`} />
    </div>
  );
}


/** One person: role, grants and password state; change e-mail, name, role and grants, reset the password, remove. */
export function PersonItem({ person, trackers, isMe, onChanged }: { person: Person; trackers: Tracker[]; isMe: boolean; onChanged: () => Promise<void> }) {
  const [editing, setEditing] = useState(false);
  const [email, setEmail] = useState(person.email);
  const [name, setName] = useState(person.name);
  const [role, setRole] = useState<InstanceRole>(person.role);
  const [grants, setGrants] = useState<Grants>(person.trackers);
  const [invitation, setInvitation] = useState<Invitation | null>(null);
  const { busy, error, status, run } = useAction();
  const headingId = `person-${person.id}`;

  const startEditing = () => {
    setEmail(person.email);
    setName(person.name);
    setRole(person.role);
    setGrants(person.trackers);
    setEditing(true);
  };
  const save = async (e: Event) => {
    e.preventDefault();
    const renamed = email.trim() !== person.email ? { email: email.trim() } : {};
    if (await run(() => accessApi.people.update(person.id, { ...renamed, name: name.trim(), role, trackers: role === 'admin' ? {} : grants }), `${email.trim()} saved.`)) {
      setEditing(false);
      await onChanged();
    }
  };
  const reset = () => run(async () => setInvitation(await accessApi.people.resetPassword(person.id)), `The password of ${person.email} is cleared: the link below sets a new one.`).then(onChanged);
  const remove = async () => {
    if (await run(() => accessApi.people.remove(person.id), `${person.email} removed.`)) await onChanged();
  };

  return (
    <li class="person" aria-labelledby={headingId} data-testid={`person-${person.email}`}>
      <div class="destination-head">
        <h3 id={headingId}>
          {person.email} {person.name && <span class="muted">{person.name}</span>} {isMe && <span class="muted">(you)</span>}
        </h3>
        <span class={`badge ${person.role === 'admin' ? 'warn' : 'muted'}`}>{person.role}</span>
        <span class={`badge ${person.hasPassword ? 'ok' : 'muted'}`} data-testid="password-state">
          {person.hasPassword ? 'password set' : 'invited'}
        </span>
      </div>
      <p class="hint">{person.role === 'admin' ? 'Editor of every tracker.' : `Trackers: ${grantsText(person.trackers, 'none yet')}.`}</p>
      {invitation && <InvitationNotice invitation={invitation} email={person.email} />}
      <Status message={status} />
      <Alert message={error} />
      {editing ? (
        <form onSubmit={save} noValidate aria-label={`Edit ${person.email}`}>
          <Field label="E-mail" required hint="What they sign in with; their sessions and tokens stay.">
            {(p) => <input {...p} type="email" autoComplete="off" spellcheck={false} autoCapitalize="off" value={email} onInput={(e) => setEmail(e.currentTarget.value)} />}
          </Field>
          <Field label="Name (optional)">{(p) => <input {...p} type="text" autoComplete="off" value={name} onInput={(e) => setName(e.currentTarget.value)} />}</Field>
          <RoleField value={role} onChange={setRole} />
          {role === 'member' && <GrantsPicker trackers={trackers} value={grants} onChange={setGrants} />}
          <div class="actions">
            <button class="button primary" type="submit" disabled={busy}>
              Save
            </button>
            <button class="button ghost" type="button" onClick={() => setEditing(false)}>
              Cancel
            </button>
          </div>
        </form>
      ) : (
        <div class="actions">
          <button type="button" class="button small" aria-label={`Edit ${person.email}`} onClick={startEditing}>
            Edit
          </button>
          <ConfirmButton label="Reset password" ariaLabel={`Reset the password of ${person.email}`} confirmLabel={`Clear the password of ${person.email}`} disabled={busy} onConfirm={reset} />
          <ConfirmButton label="Remove" ariaLabel={`Remove ${person.email}`} confirmLabel={`Remove ${person.email} for good`} disabled={busy} onConfirm={remove} />
        </div>
      )}
    </li>
  );
}
