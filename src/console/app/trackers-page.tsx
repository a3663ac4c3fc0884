import { useEffect, useRef, useState } from 'preact/hooks';
import { roleOn, useIsAdmin, useSession } from './access.js';
import { api } from './api.js';
import { Alert, CopyField, Spinner } from './components.js';
import { useFormErrors } from './form-errors.js';
import { useLoad } from './hooks.js';
import { href } from './router.js';
import { checkValues, inputOf, TrackerFields, trackerFieldKey, valuesOf } from './tracker-form.js';
import type { Tracker, UnreadableTracker } from './types.js';
import { usePageTitle } from './page-title.js';

export function TrackersPage() {
  usePageTitle('Trackers');
  const admin = useIsAdmin();
  const stored = useLoad(api.trackers.listAll, 'trackers');
  const trackers = { ...stored, data: stored.data?.trackers };
  const [created, setCreated] = useState<{ tracker: Tracker; token: string } | null>(null);

  return (
    <div class="page">
      <h1 tabIndex={-1} data-autofocus>
        Trackers
      </h1>
      {created && <CreatedNotice tracker={created.tracker} token={created.token} onDismiss={() => setCreated(null)} />}
      <section aria-labelledby="tracker-list-heading" class="card">
        <h2 id="tracker-list-heading">Your trackers</h2>
        <Alert message={trackers.error} />
        {trackers.loading && !trackers.data ? <Spinner /> : <TrackerTable trackers={trackers.data ?? []} admin={admin} />}
        <UnreadableTrackers unreadable={stored.data?.unreadable ?? []} />
      </section>
      {admin && (
        <CreateTracker
          onCreated={(tracker, token) => {
            setCreated({ tracker, token });
            void trackers.reload();
          }}
        />
      )}
    </div>
  );
}

function TrackerTable({ trackers, admin }: { trackers: Tracker[]; admin: boolean }) {
  const session = useSession();
  if (trackers.length === 0) return <p class="empty">{admin ? 'No tracker yet: create one below.' : 'No tracker is shared with you yet: an admin gives you a role on one.'}</p>;
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Id</th>
            <th scope="col">Time zone</th>
            <th scope="col">Active tokens</th>
            <th scope="col">Destinations</th>
            {!admin && <th scope="col">Your role</th>}
          </tr>
        </thead>
        <tbody>
          {trackers.map((t) => (
            <tr key={t.id}>
              <th scope="row">
                <a href={href({ page: 'tracker', trackerId: t.id, tab: 'settings' })}>{t.name}</a>
              </th>
              <td>
                <code>{t.id}</code>
              </td>
              <td>{t.timeZone}</td>
              <td>{t.tokens.filter((k) => !k.revokedAt).length}</td>
              <td>{t.destinations.length === 0 ? 'none' : t.destinations.map((d) => `${d.id}${d.enabled ? '' : ' (disabled)'}`).join(', ')}</td>
              {!admin && <td>{roleOn(session, t.id) ?? '—'}</td>}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/**
 * Trackers the relay cannot read: left out of the table (nothing of them can be shown or changed),
 * named here with the relay's reason so that an operator can mend them (docs/operating.md).
 */
function UnreadableTrackers({ unreadable }: { unreadable: UnreadableTracker[] }) {
  if (unreadable.length === 0) return null;
  return (
    <div role="alert" data-testid="unreadable-trackers">
      {unreadable.map(({ id, reason }) => (
        <p class="alert error" key={id}>
          Tracker <code>{id}</code> cannot be read: {reason}. Senders to it are refused (503) until it can; see “Trackers that cannot be read” in the operating guide.
        </p>
      ))}
    </div>
  );
}

/** The token is shown here once, right after creation; it can be copied again later from Settings and Integration. */
function CreatedNotice({ tracker, token, onDismiss }: { tracker: Tracker; token: string; onDismiss: () => void }) {
  // The form is at the bottom of the page and the notice at the top: take the reader to it.
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [tracker.id]);
  return (
    <section class="card success" aria-labelledby="created-heading" data-testid="created-tracker">
      <h2 id="created-heading" tabIndex={-1} ref={heading}>
        Tracker “{tracker.name}” created
      </h2>
      <p>
        Its id is <code>{tracker.id}</code>. This is its token: clients send it to authenticate.
      </p>
      <CopyField value={token} label={`Copy the token of ${tracker.name}`} />
      <p class="actions">
        <a class="button primary" href={href({ page: 'tracker', trackerId: tracker.id, tab: 'integration' })}>
          Integration guide
        </a>
        <a class="button" href={href({ page: 'tracker', trackerId: tracker.id, tab: 'destinations' })}>
          Add a destination
        </a>
        <button type="button" class="button ghost" onClick={onDismiss}>
          Dismiss
        </button>
      </p>
    </section>
  );
}

function CreateTracker({ onCreated }: { onCreated: (tracker: Tracker, token: string) => void }) {
  const [values, setValues] = useState(valuesOf);
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  const errors = useFormErrors(form);

  const submit = async (e: Event) => {
    e.preventDefault();
    const local = checkValues(values);
    if (Object.keys(local).length > 0) return errors.setFields(local);
    setBusy(true);
    errors.clear();
    try {
      const { tracker, token } = await api.trackers.create(inputOf(values, true));
      setValues(valuesOf());
      onCreated(tracker, token);
    } catch (err) {
      errors.fail(err, trackerFieldKey);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="card" aria-labelledby="create-heading">
      <h2 id="create-heading">Create a tracker</h2>
      <form ref={form} onSubmit={submit} noValidate>
        <TrackerFields values={values} onChange={setValues} errors={errors.fields} withId />
        <Alert message={errors.form} />
        <button class="button primary" type="submit" disabled={busy}>
          {busy ? 'Creating…' : 'Create tracker'}
        </button>
      </form>
    </section>
  );
}
