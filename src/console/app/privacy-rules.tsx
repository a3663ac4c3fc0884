import { useState } from 'preact/hooks';
import { api, messageOf } from './api.js';
import { Alert, ConfirmButton, Field, Status } from './components.js';
import { PRIVACY_ACTIONS, type PrivacyAction, type Tracker } from './types.js';

const ACTION_LABELS: Readonly<Record<PrivacyAction, string>> = {
  drop: 'drop — not stored',
  hash: 'hash — HMAC-SHA256, equal values stay equal',
  'truncate-ip': 'truncate-ip — IPv4 /24, IPv6 /48',
  'mask-email': 'mask-email — a***@example.com',
};

/** The tracker's personal-data rules: each added or removed at once, applied to the next records. */
export function PrivacyRules({ tracker, onChange, editor = true }: { tracker: Tracker; onChange: (t: Tracker) => void; editor?: boolean }) {
  const [property, setProperty] = useState('');
  const [action, setAction] = useState<PrivacyAction>('hash');
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const run = async (change: () => Promise<Tracker>, done: string) => {
    setError(null);
    setStatus(null);
    setBusy(true);
    try {
      onChange(await change());
      setStatus(done);
      return true;
    } catch (err) {
      setError(messageOf(err));
      return false;
    } finally {
      setBusy(false);
    }
  };

  const add = async (e: Event) => {
    e.preventDefault();
    const name = property.trim();
    if (name === '') return setError('Name a property: email, a JSON pointer such as /address/email, _uid, _sid or _ip.');
    if (await run(() => api.trackers.setPrivacyRule(tracker.id, { property: name, action }), `Rule saved: ${name} → ${action}.`)) setProperty('');
  };

  return (
    <section class="card" aria-labelledby="privacy-heading">
      <h2 id="privacy-heading">Personal data</h2>
      <p class="hint">
        Applied to every user, session and event (webhook sources included) before it is stored, so the raw value never reaches the queue, the live view or a destination. A property is a top-level name (<code>email</code>), a JSON pointer into the properties (
        <code>/address/email</code>, <code>/items/*/email</code>), <code>_uid</code> or <code>_sid</code> (hash only), or <code>_ip</code> (the captured client IP). Records already stored are not changed.
      </p>
      {tracker.privacyRules.length === 0 ? (
        <p>No rules: every property is stored as sent.</p>
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Property</th>
                <th scope="col">Action</th>
                {editor && (
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {tracker.privacyRules.map((r) => (
                <tr key={r.property}>
                  <td>
                    <code>{r.property}</code>
                  </td>
                  <td>{ACTION_LABELS[r.action]}</td>
                  {editor && (
                    <td class="row-actions">
                      <ConfirmButton label="Remove" ariaLabel={`Remove the rule for ${r.property}`} confirmLabel={`Remove ${r.property}`} onConfirm={() => void run(() => api.trackers.removePrivacyRule(tracker.id, r.property), `Rule for ${r.property} removed.`)} />
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {editor && (
        <form onSubmit={add} noValidate>
          <div class="field-row">
            <Field label="Property" hint="A name, a JSON pointer, _uid, _sid or _ip. A property that has a rule gets the new action.">
              {(p) => <input {...p} type="text" value={property} spellcheck={false} autoCapitalize="off" onInput={(e) => setProperty(e.currentTarget.value)} />}
            </Field>
            <Field label="Action">
              {(p) => (
                <select {...p} value={action} onChange={(e) => setAction(e.currentTarget.value as PrivacyAction)}>
                  {PRIVACY_ACTIONS.map((a) => (
                    <option key={a} value={a}>
                      {ACTION_LABELS[a]}
                    </option>
                  ))}
                </select>
              )}
            </Field>
          </div>
          <Alert message={error} />
          <div class="actions">
            <button class="button" type="submit" disabled={busy}>
              Add rule
            </button>
            <Status message={status} />
          </div>
        </form>
      )}
    </section>
  );
}
