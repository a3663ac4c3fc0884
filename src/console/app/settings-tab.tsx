import { useEffect, useRef, useState } from 'preact/hooks';
import { useCanEdit, useIsAdmin } from './access.js';
import { useAction } from './hooks.js';
import { navigate } from './router.js';
import { api, messageOf } from './api.js';
import { Alert, ConfirmButton, CopyButton, CopyField, Status } from './components.js';
import { useFormErrors } from './form-errors.js';
import { formatTime, shortToken } from './format.js';
import { PrivacyRules } from './privacy-rules.js';
import { checkValues, inputOf, TrackerFields, trackerFieldKey, valuesOf } from './tracker-form.js';
import type { Tracker } from './types.js';

export function SettingsTab({ tracker, onChange }: { tracker: Tracker; onChange: (t: Tracker) => void }) {
  const editor = useCanEdit(tracker.id);
  const admin = useIsAdmin();
  return (
    <>
      {editor ? <TrackerSettings tracker={tracker} onChange={onChange} /> : <SettingsSummary tracker={tracker} />}
      <PrivacyRules tracker={tracker} onChange={onChange} editor={editor} />
      <Tokens tracker={tracker} onChange={onChange} editor={editor} />
      {admin && <RemoveTracker tracker={tracker} />}
    </>
  );
}

/** An admin's: the tracker goes with what Redis holds for it; its files stay. */
function RemoveTracker({ tracker }: { tracker: Tracker }) {
  const { busy, error, run } = useAction();
  const remove = async () => {
    if (await run(() => api.trackers.remove(tracker.id), '')) navigate({ page: 'trackers' });
  };
  return (
    <section class="card" aria-labelledby="remove-tracker-heading">
      <h2 id="remove-tracker-heading">Remove this tracker</h2>
      <p class="hint">
        Its tokens stop working at once. Its destinations go, with the records still queued for them, their dead letters and the records not yet routed. The archive's files and a local warehouse file stay on disk.
      </p>
      <Alert message={error} />
      <ConfirmButton label="Remove tracker" ariaLabel={`Remove tracker ${tracker.id}`} confirmLabel={`Remove ${tracker.id} for good`} disabled={busy} onConfirm={remove} />
    </section>
  );
}

/** A viewer's Settings: the same facts, nothing to change. */
function SettingsSummary({ tracker: t }: { tracker: Tracker }) {
  return (
    <section class="card" aria-labelledby="settings-heading">
      <h2 id="settings-heading">Settings</h2>
      <dl class="kv">
        <dt>Name</dt>
        <dd>{t.name}</dd>
        <dt>Time zone</dt>
        <dd>{t.timeZone}</dd>
        <dt>CORS origins</dt>
        <dd>{t.corsOrigins.join(', ') || 'none'}</dd>
        <dt>Rate limit</dt>
        <dd>{t.rateLimit ? `${t.rateLimit.recordsPerSecond} records/s${t.rateLimit.burst !== undefined ? `, burst ${t.rateLimit.burst}` : ''}` : 'none'}</dd>
        <dt>Request context</dt>
        <dd>{t.captureContext ? 'captured' : 'not captured'}</dd>
        <dt>Duplicate window</dt>
        <dd>{t.dedupWindowHours} h</dd>
        <dt>Partitions</dt>
        <dd>{t.partitions}</dd>
        <dt>Archive</dt>
        <dd>{t.archiveDays === 0 ? 'off' : `${t.archiveDays} days`}</dd>
      </dl>
      <p class="hint">You are a viewer of this tracker: an editor changes these.</p>
    </section>
  );
}

function TrackerSettings({ tracker, onChange }: { tracker: Tracker; onChange: (t: Tracker) => void }) {
  const [values, setValues] = useState(() => valuesOf(tracker));
  const [busy, setBusy] = useState(false);
  const [status, setStatus] = useState<string | null>(null);
  const form = useRef<HTMLFormElement>(null);
  const errors = useFormErrors(form);
  useEffect(() => setValues(valuesOf(tracker)), [tracker.id]);

  const submit = async (e: Event) => {
    e.preventDefault();
    setStatus(null);
    const local = checkValues(values);
    if (Object.keys(local).length > 0) return errors.setFields(local);
    setBusy(true);
    errors.clear();
    try {
      const updated = await api.trackers.update(tracker.id, inputOf(values, false));
      onChange(updated);
      setValues(valuesOf(updated));
      setStatus('Settings saved.');
    } catch (err) {
      errors.fail(err, trackerFieldKey);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="card" aria-labelledby="settings-heading">
      <h2 id="settings-heading">Settings</h2>
      <form ref={form} onSubmit={submit} noValidate>
        <TrackerFields values={values} onChange={setValues} errors={errors.fields} withId={false} />
        <Alert message={errors.form} />
        <div class="actions">
          <button class="button primary" type="submit" disabled={busy}>
            {busy ? 'Saving…' : 'Save settings'}
          </button>
          <Status message={status} />
        </div>
      </form>
    </section>
  );
}

function Tokens({ tracker, onChange, editor }: { tracker: Tracker; onChange: (t: Tracker) => void; editor: boolean }) {
  const [fresh, setFresh] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const active = tracker.tokens.filter((t) => !t.revokedAt).length;

  const add = async () => {
    setError(null);
    try {
      const { tracker: updated, token } = await api.trackers.addToken(tracker.id);
      onChange(updated);
      setFresh(token);
      setStatus('New token added. The old ones keep working until you revoke them.');
    } catch (err) {
      setError(messageOf(err));
    }
  };

  const revoke = async (token: string) => {
    setError(null);
    try {
      const { tracker: updated } = await api.trackers.revokeToken(tracker.id, token);
      onChange(updated);
      if (fresh === token) setFresh(null);
      setStatus(`Token ${shortToken(token)} revoked: it stops working within a few seconds.`);
    } catch (err) {
      setError(messageOf(err));
    }
  };

  return (
    <section class="card" aria-labelledby="tokens-heading">
      <h2 id="tokens-heading">Tokens</h2>
      {editor && <p class="hint">To rotate: add a token, move your clients to it, then revoke the old one. A tracker keeps at least one active token.</p>}
      {fresh && (
        <div class="notice success">
          <p>New token:</p>
          <CopyField value={fresh} label="Copy the new token" />
        </div>
      )}
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Token</th>
              <th scope="col">Created</th>
              <th scope="col">State</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {tracker.tokens.map((t) => (
              <tr key={t.token} class={t.revokedAt ? 'revoked' : undefined}>
                <td>
                  <code>{shortToken(t.token)}</code>
                </td>
                <td>{formatTime(t.createdAt)}</td>
                <td>{t.revokedAt ? <span class="badge muted">revoked {formatTime(t.revokedAt)}</span> : <span class="badge ok">active</span>}</td>
                <td class="row-actions">
                  {!t.revokedAt && (
                    <>
                      <CopyButton text={t.token} label={`Copy token ${shortToken(t.token)}`} />
                      {editor && <ConfirmButton label="Revoke" ariaLabel={`Revoke token ${shortToken(t.token)}`} confirmLabel={`Revoke ${shortToken(t.token)}`} disabled={active <= 1} onConfirm={() => revoke(t.token)} />}
                    </>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <Alert message={error} />
      {editor && (
        <div class="actions">
          <button type="button" class="button" onClick={add}>
            Add a token
          </button>
          <Status message={status} />
        </div>
      )}
    </section>
  );
}
