import { useRef, useState } from 'preact/hooks';
import { accessApi } from './access-api.js';
import { roleOn, useSession } from './access.js';
import { TOKEN_SCOPES, type SessionInfo, type TokenScope } from './access-types.js';
import { api, messageOf } from './api.js';
import { Alert, Field, Spinner, Status } from './components.js';
import { useFormErrors } from './form-errors.js';
import { useLoad } from './hooks.js';
import { usePageTitle } from './page-title.js';
import { ServiceTokenForm } from './service-token-form.js';
import { NameAndExpiry, NewToken, ScopesPicker, TokenTable } from './token-fields.js';
import type { Tracker } from './types.js';

/** A token never exceeds its owner: write and payloads need an editor's role somewhere, admin the admin role. */
export function scopesFor(session: SessionInfo): TokenScope[] {
  if (session.rights.admin) return [...TOKEN_SCOPES];
  const editor = Object.values(session.rights.trackers).includes('editor');
  return editor ? ['read', 'write', 'payloads'] : ['read'];
}

/** API tokens for scripts and CI: one's own, and (admins) everyone's and service tokens. */
export function TokensPage() {
  usePageTitle('Tokens');
  const session = useSession();
  const tokens = useLoad(accessApi.tokens.list, 'tokens');
  const trackers = useLoad(api.trackers.list, 'trackers');
  const [status, setStatus] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const me = session.person?.id;
  const mine = (tokens.data ?? []).filter((t) => me !== undefined && t.ownerId === me);
  const others = (tokens.data ?? []).filter((t) => me === undefined || t.ownerId !== me);
  const onRevoked = (message: string | null, err?: unknown) => {
    setStatus(message);
    setError(err === undefined ? null : messageOf(err));
    void tokens.reload();
  };

  return (
    <div class="page">
      <h1 tabIndex={-1} data-autofocus>
        Tokens
      </h1>
      <Status message={status} />
      <Alert message={tokens.error ?? error} />
      {me !== undefined && (
        <section class="card" aria-labelledby="my-tokens-heading">
          <h2 id="my-tokens-heading">Your tokens</h2>
          <p class="hint">A personal token acts as you, within its scopes and trackers: never more than your role allows now. It stops working when you are removed, and loses what a demotion takes from you.</p>
          {!tokens.data ? tokens.loading && <Spinner /> : mine.length === 0 ? <p class="empty">No token yet.</p> : <TokenTable tokens={mine} showOwner={false} label="Your tokens" onRevoked={onRevoked} />}
        </section>
      )}
      {me !== undefined && <MakeToken session={session} trackers={trackers.data ?? []} onMade={tokens.reload} />}
      {session.rights.admin && (
        <section class="card" aria-labelledby="all-tokens-heading">
          <h2 id="all-tokens-heading">{me === undefined ? 'All tokens' : 'Everyone else’s tokens'}</h2>
          {!tokens.data ? tokens.loading && <Spinner /> : others.length === 0 ? <p class="empty">None.</p> : <TokenTable tokens={others} showOwner label="Other tokens" onRevoked={onRevoked} />}
        </section>
      )}
      {session.rights.admin && <ServiceTokenForm trackers={trackers.data ?? []} onMade={tokens.reload} />}
      {me === undefined && !session.rights.admin && <p class="empty">Tokens are made by people signed in to the console.</p>}
    </div>
  );
}

/** A personal token: a name, scopes up to one's own rights, an expiry, and optionally some trackers only. */
function MakeToken({ session, trackers, onMade }: { session: SessionInfo; trackers: Tracker[]; onMade: () => Promise<void> }) {
  const allowed = scopesFor(session);
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<TokenScope[]>(['read']);
  const [days, setDays] = useState('90');
  const [only, setOnly] = useState<string[]>([]);
  const [made, setMade] = useState<{ token: string; name: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  const errors = useFormErrors(form);
  const reachable = trackers.filter((t) => roleOn(session, t.id) !== undefined);

  const submit = async (e: Event) => {
    e.preventDefault();
    const expires = Number(days);
    if (name.trim() === '') return errors.setFields({ name: 'Name it after where it is used (“nightly export”).' });
    if (scopes.length === 0) return errors.setFields({ scopes: 'At least one scope.' });
    if (!Number.isInteger(expires) || expires < 1 || expires > 366) return errors.setFields({ expiresInDays: 'A whole number of days from 1 to 366.' });
    setBusy(true);
    errors.clear();
    setMade(null);
    try {
      const { token, view } = await accessApi.tokens.create({ name: name.trim(), scopes, expiresInDays: expires, ...(only.length > 0 ? { trackers: only } : {}) });
      setMade({ token, name: view.name });
      setName('');
      await onMade();
    } catch (err) {
      errors.fail(err, (field) => (['name', 'scopes', 'expiresInDays'].includes(field.split('.')[0]!) ? field.split('.')[0] : undefined));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="card" aria-labelledby="make-token-heading">
      <h2 id="make-token-heading">Make a token</h2>
      {made && <NewToken token={made.token} name={made.name} />}
      <form ref={form} onSubmit={submit} noValidate aria-label="Make a personal token">
        <NameAndExpiry name={name} onName={setName} days={days} onDays={setDays} errors={errors} />
        <ScopesPicker allowed={allowed} value={scopes} onChange={setScopes} error={errors.fields.scopes} />
        {reachable.length > 0 && (
          <fieldset class="checks">
            <legend>Only these trackers (optional)</legend>
            {reachable.map((t) => (
              <label key={t.id} class="check">
                <input type="checkbox" checked={only.includes(t.id)} onChange={(e) => setOnly(e.currentTarget.checked ? [...only, t.id] : only.filter((x) => x !== t.id))} /> {t.name} <code class="muted">{t.id}</code>
              </label>
            ))}
            <p class="hint">None ticked: every tracker your role reaches{session.rights.admin ? ' (a token limited to some trackers is no admin)' : ''}.</p>
          </fieldset>
        )}
        <Alert message={errors.form} />
        <button class="button primary" type="submit" disabled={busy}>
          {busy ? 'Making…' : 'Make token'}
        </button>
      </form>
    </section>
  );
}
