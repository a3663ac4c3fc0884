import { useId } from 'preact/hooks';
import { accessApi } from './access-api.js';
import type { ApiTokenView, TokenScope } from './access-types.js';
import { ConfirmButton, CopyField, Field } from './components.js';
import type { FormErrors } from './form-errors.js';
import { formatTime } from './format.js';
import { grantsText } from './grants-picker.js';

export const SCOPE_TEXT: Record<TokenScope, string> = {
  read: 'read — look at what its rights show',
  write: 'write — change what its rights may change',
  payloads: 'payloads — read records: live view, history, warehouse, dead letters',
  admin: 'admin — people, tokens, the audit log, new trackers',
};

/** Checkboxes for the scopes `allowed` (what the maker may give). */
export function ScopesPicker({ allowed, value, onChange, error }: { allowed: readonly TokenScope[]; value: TokenScope[]; onChange: (s: TokenScope[]) => void; error?: string | undefined }) {
  const errorId = `${useId()}-error`;
  return (
    <fieldset class="checks" aria-describedby={error ? errorId : undefined}>
      <legend>Scopes</legend>
      {allowed.map((s) => (
        <label key={s} class="check">
          <input type="checkbox" checked={value.includes(s)} onChange={(e) => onChange(e.currentTarget.checked ? [...value, s] : value.filter((x) => x !== s))} /> {SCOPE_TEXT[s]}
        </label>
      ))}
      {error && (
        <p class="field-error" id={errorId}>
          {error}
        </p>
      )}
    </fieldset>
  );
}

/** A token just made: its text, shown this once. */
export function NewToken({ token, name }: { token: string; name: string }) {
  return (
    <div class="notice success" data-testid="new-token">
      <p>
        <strong>Copy the token “{name}” now:</strong> only its digest is kept, so it is never shown again. Send it as <code>Authorization: Bearer …</code>.
      </p>
      <CopyField value={token} label="Copy the new token" />
    </div>
  );
}

function ownerText(t: ApiTokenView): string {
  if (t.kind === 'personal') return t.createdBy;
  return `service: ${t.grants?.role === 'admin' ? 'admin' : grantsText(t.grants?.trackers ?? {})}`;
}

const STATE_TONE: Record<ApiTokenView['state'], string> = { active: 'ok', expired: 'muted', revoked: 'muted' };

/** Tokens with their prefix, scopes, expiry, last use and state; an active one can be revoked. */
export function TokenTable({ tokens, showOwner, label, onRevoked }: { tokens: ApiTokenView[]; showOwner: boolean; label: string; onRevoked: (message: string | null, error?: unknown) => void }) {
  const revoke = async (t: ApiTokenView) => {
    try {
      await accessApi.tokens.revoke(t.id);
      onRevoked(`Token ${t.prefix} (${t.name}) revoked: it is refused from the next request on.`);
    } catch (err) {
      onRevoked(null, err);
    }
  };
  return (
    <div class="table-wrap">
      <table aria-label={label}>
        <thead>
          <tr>
            <th scope="col">Token</th>
            <th scope="col">Name</th>
            {showOwner && <th scope="col">Owner</th>}
            <th scope="col">Scopes</th>
            <th scope="col">Trackers</th>
            <th scope="col">Expires</th>
            <th scope="col">Last used</th>
            <th scope="col">State</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {tokens.map((t) => (
            <tr key={t.id} class={t.state === 'active' ? undefined : 'revoked'} data-testid={`token-${t.prefix}`}>
              <td>
                <code>{t.prefix}…</code>
              </td>
              <td>{t.name}</td>
              {showOwner && <td>{ownerText(t)}</td>}
              <td>{t.scopes.join(', ')}</td>
              <td>{t.trackers?.join(', ') ?? 'all its rights reach'}</td>
              <td>{formatTime(t.expiresAt)}</td>
              <td>{t.lastUsedAt ? formatTime(t.lastUsedAt) : 'never'}</td>
              <td>
                <span class={`badge ${STATE_TONE[t.state]}`}>{t.state}</span>
              </td>
              <td class="row-actions">{t.state === 'active' && <ConfirmButton label="Revoke" ariaLabel={`Revoke ${t.name}`} confirmLabel={`Revoke ${t.prefix}`} onConfirm={() => revoke(t)} />}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A token's name and lifetime: the first fields of both token forms. */
export function NameAndExpiry({ name, onName, days, onDays, errors }: { name: string; onName: (v: string) => void; days: string; onDays: (v: string) => void; errors: FormErrors }) {
  return (
    <div class="field-row">
      <Field label="Name" required error={errors.fields.name}>
        {(p) => <input {...p} type="text" autoComplete="off" value={name} onInput={(e) => onName(e.currentTarget.value)} />}
      </Field>
      <Field label="Expires in (days)" hint="1 to 366." error={errors.fields.expiresInDays}>
        {(p) => <input {...p} type="number" min={1} max={366} value={days} onInput={(e) => onDays(e.currentTarget.value)} />}
      </Field>
    </div>
  );
}
