import { useRef, useState } from 'preact/hooks';
import { accessApi } from './access-api.js';
import { TOKEN_SCOPES, type TokenScope } from './access-types.js';
import { Alert, Field } from './components.js';
import { useFormErrors } from './form-errors.js';
import { GrantsPicker, type Grants } from './grants-picker.js';
import { NameAndExpiry, NewToken, ScopesPicker } from './token-fields.js';
import type { Tracker } from './types.js';

/** A service token (admins): its own grants, kept when the people who made it leave. */
export function ServiceTokenForm({ trackers, onMade }: { trackers: Tracker[]; onMade: () => Promise<void> }) {
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<TokenScope[]>(['read']);
  const [days, setDays] = useState('90');
  const [admin, setAdmin] = useState(false);
  const [grants, setGrants] = useState<Grants>({});
  const [made, setMade] = useState<{ token: string; name: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  const errors = useFormErrors(form);
  const allowed: readonly TokenScope[] = admin ? TOKEN_SCOPES : TOKEN_SCOPES.filter((s) => s !== 'admin');

  const submit = async (e: Event) => {
    e.preventDefault();
    const expires = Number(days);
    if (name.trim() === '') return errors.setFields({ name: 'Name it after what uses it (“CI deploys”).' });
    const given = scopes.filter((s) => allowed.includes(s));
    if (given.length === 0) return errors.setFields({ scopes: 'At least one scope.' });
    if (!Number.isInteger(expires) || expires < 1 || expires > 366) return errors.setFields({ expiresInDays: 'A whole number of days from 1 to 366.' });
    if (!admin && Object.keys(grants).length === 0) return errors.setFields({ grants: 'Give it a role on at least one tracker, or make it an admin token.' });
    setBusy(true);
    errors.clear();
    setMade(null);
    try {
      const { token, view } = await accessApi.tokens.createService({ name: name.trim(), scopes: given, expiresInDays: expires, ...(admin ? { role: 'admin' as const } : { grants }) });
      setMade({ token, name: view.name });
      setName('');
      await onMade();
    } catch (err) {
      errors.fail(err, (field) => (['name', 'scopes', 'expiresInDays', 'grants'].includes(field.split('.')[0]!) ? field.split('.')[0] : undefined));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="card" aria-labelledby="service-token-heading">
      <h2 id="service-token-heading">Make a service token</h2>
      <p class="hint">For a system rather than a person: it keeps its rights when people leave. Revoke it here when the system goes.</p>
      {made && <NewToken token={made.token} name={made.name} />}
      <form ref={form} onSubmit={submit} noValidate aria-label="Make a service token">
        <NameAndExpiry name={name} onName={setName} days={days} onDays={setDays} errors={errors} />
        <Field inline label="Admin: every tracker, and the admin scope if given">
          {(p) => <input {...p} type="checkbox" checked={admin} onChange={(e) => setAdmin(e.currentTarget.checked)} />}
        </Field>
        <ScopesPicker allowed={allowed} value={scopes} onChange={setScopes} error={errors.fields.scopes} />
        {!admin && <GrantsPicker trackers={trackers} value={grants} onChange={setGrants} legend="Its role per tracker" />}
        {errors.fields.grants && <p class="field-error">{errors.fields.grants}</p>}
        <Alert message={errors.form} />
        <button class="button primary" type="submit" disabled={busy}>
          {busy ? 'Making…' : 'Make service token'}
        </button>
      </form>
    </section>
  );
}
