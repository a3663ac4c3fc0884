import { useRef, useState } from 'preact/hooks';
import { useCanEdit } from './access.js';
import { api, messageOf } from './api.js';
import { Alert, ConfirmButton, CopyField, Field, Spinner, Status } from './components.js';
import { useFormErrors } from './form-errors.js';
import { formatTime } from './format.js';
import { takeFreshSecret } from './fresh-secrets.js';
import { useLoad } from './hooks.js';
import { mappingKey, MappingFields, mappingState, toMapping } from './mapping-fields.js';
import { href, navigate } from './router.js';
import { ISSUES_OWN_SECRET, SetupSteps, SOURCE_LABELS } from './source-setup.js';
import type { SourceDelivery, SourceView } from './types.js';

/** Deliveries arrive while the owner sets the sender up; a few seconds is soon enough to see them. */
const DELIVERIES_REFRESH_MS = 3000;

/** One webhook source: where to paste what at the sender, its secret's rotation, its mapping and its last deliveries. */
export function SourcePage({ trackerId, sourceId }: { trackerId: string; sourceId: string }) {
  const editor = useCanEdit(trackerId);
  const source = useLoad(() => api.sources.get(trackerId, sourceId), `${trackerId}/${sourceId}`);
  // The secret as the answer that made it showed it (added, or rotated here); later answers say [redacted].
  const [secret, setSecret] = useState(() => takeFreshSecret(trackerId, sourceId));
  const [status, setStatus] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const s = source.data;

  const remove = async () => {
    setError(null);
    try {
      await api.sources.remove(trackerId, sourceId);
      navigate({ page: 'tracker', trackerId, tab: 'sources' });
    } catch (err) {
      setError(messageOf(err));
    }
  };

  return (
    <>
      <p class="breadcrumb">
        <a href={href({ page: 'tracker', trackerId, tab: 'sources' })}>Webhook sources</a> <span aria-hidden="true">/</span>
      </p>
      <Alert message={source.error} />
      {!s ? (
        source.loading && <Spinner />
      ) : (
        <>
          <section class="card" aria-labelledby="source-heading" data-testid="source-page">
            <h2 id="source-heading">
              {s.id} <span class="muted">{SOURCE_LABELS[s.type]}</span>
            </h2>
            <h3>Webhook URL</h3>
            <CopyField value={s.url} label={`Copy the webhook URL of ${s.id}`} />
            <h3>Signing secret</h3>
            {secret ? (
              <>
                <CopyField value={secret} label={`Copy the signing secret of ${s.id}`} />
                <p class="hint">Copy it now: it is shown only this once (the relay keeps it encrypted and never shows it again).</p>
              </>
            ) : (
              <p class="hint" data-testid="secret-hidden">
                Hidden: a signing secret is shown once, when it is made. {editor ? 'Rotate it below to get a new one.' : 'An editor of this tracker can rotate it.'}
              </p>
            )}
            {s.previousSecretUntil && Date.parse(s.previousSecretUntil) > Date.now() && <p class="hint">The previous secret is accepted until {formatTime(s.previousSecretUntil)}.</p>}
            <h3>Set it up at the sender</h3>
            <SetupSteps source={s} />
            <Status message={status} />
            <Alert message={error} />
            {editor && (
              <div class="actions">
                <ConfirmButton label="Remove source" ariaLabel={`Remove source ${s.id}`} confirmLabel={`Remove ${s.id} for good`} onConfirm={remove} />
              </div>
            )}
          </section>
          {/* Deliveries carry what the sender posted, and the rest changes the source: an editor's. */}
          {editor && (
            <>
              <Deliveries trackerId={trackerId} sourceId={s.id} />
              <RotateSecret
                source={s}
                trackerId={trackerId}
                onRotated={(next) => {
                  source.setData(next);
                  setSecret(next.secret);
                  setStatus(`Secret rotated: copy the new one above. ${next.previousSecretUntil && Date.parse(next.previousSecretUntil) > Date.now() ? `The previous one is accepted until ${formatTime(next.previousSecretUntil)}.` : 'The previous one no longer works.'}`);
                }}
              />
              <MappingEditor
                source={s}
                trackerId={trackerId}
                onSaved={(next) => {
                  source.setData(next);
                  setStatus('Mapping saved.');
                }}
              />
            </>
          )}
        </>
      )}
    </>
  );
}

function verdictText(d: SourceDelivery): string {
  if (d.verdict === 'refused') return `${d.status} refused: ${d.reason ?? 'unknown reason'}`;
  if (d.verdict === 'challenge') return 'handshake answered';
  return d.verdict === 'duplicate' ? 'duplicate (stored before)' : 'accepted';
}

const TONE: Record<SourceDelivery['verdict'], string> = { accepted: 'ok', challenge: 'ok', duplicate: 'warn', refused: 'error' };

function Deliveries({ trackerId, sourceId }: { trackerId: string; sourceId: string }) {
  const list = useLoad(() => api.sources.deliveries(trackerId, sourceId), `${trackerId}/${sourceId}`, DELIVERIES_REFRESH_MS);
  return (
    <section class="card" aria-labelledby="deliveries-heading">
      <h2 id="deliveries-heading">Last deliveries</h2>
      <Alert message={list.error} />
      {!list.data ? (
        list.loading && <Spinner />
      ) : list.data.length === 0 ? (
        <p class="empty">No delivery yet. Once the sender is set up, each delivery shows here with its verdict (refreshed every few seconds).</p>
      ) : (
        <ul class="deliveries" data-testid="source-deliveries">
          {list.data.map((d, i) => (
            <li key={`${d.at}-${i}`} class={`delivery ${d.verdict}`} data-testid="source-delivery" data-verdict={d.verdict}>
              <span class="time">{formatTime(d.at)}</span> <span class={`badge ${TONE[d.verdict]}`}>{verdictText(d)}</span>{' '}
              {d.event && (
                <>
                  <code>{d.event}</code> <span class="muted">id {d.id}</span>
                </>
              )}
              {d.message && <span class="error-text">{d.message}</span>}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function RotateSecret({ source, trackerId, onRotated }: { source: SourceView; trackerId: string; onRotated: (s: SourceView) => void }) {
  const issuer = ISSUES_OWN_SECRET[source.type];
  const [secret, setSecret] = useState('');
  const [graceHours, setGraceHours] = useState('24');
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  const errors = useFormErrors(form);

  const submit = async (e: Event) => {
    e.preventDefault();
    const grace = Number(graceHours);
    if (graceHours.trim() === '' || !Number.isFinite(grace) || grace < 0) return errors.setFields({ graceHours: 'A number of hours, 0 or more.' });
    if (issuer && !secret.trim()) return errors.setFields({ secret: `${issuer.split(':')[0]}: roll it there first, then paste the new one here.` });
    setBusy(true);
    errors.clear();
    try {
      onRotated(await api.sources.rotateSecret(trackerId, source.id, { graceHours: grace, ...(secret.trim() ? { secret: secret.trim() } : {}) }));
      setSecret('');
    } catch (err) {
      errors.fail(err, (field) => (field === 'secret' || field === 'graceHours' ? field : undefined));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="card" aria-labelledby="rotate-heading">
      <h2 id="rotate-heading">Rotate the secret</h2>
      <form ref={form} onSubmit={submit} noValidate aria-label="Rotate the signing secret">
        <div class="field-row">
          <Field label={issuer ? 'New secret' : 'New secret (optional)'} required={Boolean(issuer)} hint={issuer ?? 'Leave empty to generate one.'} error={errors.fields.secret}>
            {(p) => <input {...p} type="text" spellcheck={false} autoCapitalize="off" autoComplete="off" value={secret} onInput={(e) => setSecret(e.currentTarget.value)} />}
          </Field>
          <Field label="Grace period (hours)" hint="The previous secret keeps working this long, while the sender is updated." error={errors.fields.graceHours}>
            {(p) => <input {...p} type="number" min={0} step="any" value={graceHours} onInput={(e) => setGraceHours(e.currentTarget.value)} />}
          </Field>
        </div>
        <Alert message={errors.form} />
        <div class="actions">
          <button class="button" type="submit" disabled={busy}>
            {busy ? 'Rotating…' : 'Rotate secret'}
          </button>
        </div>
      </form>
    </section>
  );
}

function MappingEditor({ source, trackerId, onSaved }: { source: SourceView; trackerId: string; onSaved: (s: SourceView) => void }) {
  const [state, setState] = useState(() => mappingState(source.mapping));
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  const errors = useFormErrors(form);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    errors.clear();
    try {
      onSaved(await api.sources.setMapping(trackerId, source.id, toMapping(state)));
    } catch (err) {
      errors.fail(err, mappingKey);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="card" aria-labelledby="mapping-heading">
      <h2 id="mapping-heading">Mapping</h2>
      <p class="hint">Where the reserved fields come from; a rule that finds nothing in a delivery leaves the preset’s value.</p>
      <form ref={form} onSubmit={submit} noValidate aria-label="Mapping of the source">
        <MappingFields state={state} onChange={setState} errors={errors.fields} />
        <Alert message={errors.form} />
        <div class="actions">
          <button class="button" type="submit" disabled={busy}>
            {busy ? 'Saving…' : 'Save mapping'}
          </button>
        </div>
      </form>
    </section>
  );
}
