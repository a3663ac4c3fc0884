import { useRef, useState } from 'preact/hooks';
import { api } from './api.js';
import { Alert, Field } from './components.js';
import { useFormErrors } from './form-errors.js';
import { mappingKey, MappingFields, mappingState, toMapping } from './mapping-fields.js';
import { ISSUES_OWN_SECRET, SOURCE_LABELS } from './source-setup.js';
import { SOURCE_TYPES, type HmacSettings, type SourceType, type SourceView } from './types.js';

const HMAC_FIELDS = ['header', 'algorithm', 'encoding', 'signaturePrefix', 'timestampHeader'] as const;

/**
 * Adds a webhook source: its type, an optional id and secret (required where the provider makes
 * it), the signing settings of a generic HMAC sender, and where its reserved fields come from.
 */
export function SourceForm({ trackerId, onSaved }: { trackerId: string; onSaved: (s: SourceView) => void }) {
  const [type, setType] = useState<SourceType | ''>('');
  const [id, setId] = useState('');
  const [secret, setSecret] = useState('');
  const [hmac, setHmac] = useState({ header: '', algorithm: 'sha256', encoding: 'hex', signaturePrefix: '', timestampHeader: '' });
  const [mapping, setMapping] = useState(mappingState());
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  const errors = useFormErrors(form);
  const issuer = type ? ISSUES_OWN_SECRET[type] : null;

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!type) return errors.setFields({ type: 'Choose who sends the webhooks.' });
    if (issuer && !secret.trim()) return errors.setFields({ secret: issuer });
    if (type === 'hmac' && !hmac.header.trim()) return errors.setFields({ 'hmac.header': 'Name the header that holds the signature.' });
    setBusy(true);
    errors.clear();
    try {
      const settings: Partial<HmacSettings> = {
        header: hmac.header.trim(),
        algorithm: hmac.algorithm as HmacSettings['algorithm'],
        encoding: hmac.encoding as HmacSettings['encoding'],
        signaturePrefix: hmac.signaturePrefix,
        ...(hmac.timestampHeader.trim() ? { timestampHeader: hmac.timestampHeader.trim() } : {}),
      };
      const saved = await api.sources.add(trackerId, {
        type,
        ...(id.trim() ? { id: id.trim() } : {}),
        ...(secret.trim() ? { secret: secret.trim() } : {}),
        ...(type === 'hmac' ? { hmac: settings } : {}),
        mapping: toMapping(mapping),
      });
      onSaved(saved);
    } catch (err) {
      errors.fail(err, (field) => (field === 'id' || field === 'type' || field === 'secret' ? field : field.startsWith('hmac.') ? (HMAC_FIELDS.find((f) => field === `hmac.${f}`) ? field : undefined) : mappingKey(field)));
    } finally {
      setBusy(false);
    }
  };

  const hmacInput = (key: 'header' | 'signaturePrefix' | 'timestampHeader', label: string, hint: string, required = false) => (
    <Field label={label} hint={hint} required={required} error={errors.fields[`hmac.${key}`]}>
      {(p) => <input {...p} type="text" spellcheck={false} autoCapitalize="off" value={hmac[key]} onInput={(e) => setHmac({ ...hmac, [key]: e.currentTarget.value })} />}
    </Field>
  );

  return (
    <form ref={form} onSubmit={submit} noValidate class="source-form" aria-label="New webhook source" data-testid="add-source-form">
      <div class="field-row">
        <Field label="Sender" required error={errors.fields.type}>
          {(p) => (
            <select {...p} value={type} onChange={(e) => setType(e.currentTarget.value as SourceType)}>
              <option value="" disabled>
                Choose a sender…
              </option>
              {SOURCE_TYPES.map((t) => (
                <option key={t} value={t}>
                  {SOURCE_LABELS[t]}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Id (optional)" hint="Part of the URL; defaults to the type." error={errors.fields.id}>
          {(p) => <input {...p} type="text" spellcheck={false} autoCapitalize="off" value={id} onInput={(e) => setId(e.currentTarget.value)} />}
        </Field>
      </div>
      <Field label={issuer ? 'Signing secret' : 'Signing secret (optional)'} required={Boolean(issuer)} hint={issuer ?? 'Leave empty to generate a strong one, shown on the next page.'} error={errors.fields.secret}>
        {(p) => <input {...p} type="text" spellcheck={false} autoCapitalize="off" autoComplete="off" value={secret} onInput={(e) => setSecret(e.currentTarget.value)} />}
      </Field>
      {type === 'hmac' && (
        <fieldset>
          <legend>How the sender signs</legend>
          <div class="field-row">
            {hmacInput('header', 'Signature header', 'e.g. X-Signature', true)}
            <Field label="Algorithm" error={errors.fields['hmac.algorithm']}>
              {(p) => (
                <select {...p} value={hmac.algorithm} onChange={(e) => setHmac({ ...hmac, algorithm: e.currentTarget.value })}>
                  <option value="sha256">HMAC-SHA256</option>
                  <option value="sha512">HMAC-SHA512</option>
                  <option value="sha1">HMAC-SHA1</option>
                </select>
              )}
            </Field>
            <Field label="Encoding" error={errors.fields['hmac.encoding']}>
              {(p) => (
                <select {...p} value={hmac.encoding} onChange={(e) => setHmac({ ...hmac, encoding: e.currentTarget.value })}>
                  <option value="hex">hex</option>
                  <option value="base64">base64</option>
                </select>
              )}
            </Field>
          </div>
          <div class="field-row">
            {hmacInput('signaturePrefix', 'Signature prefix', 'text before the signature, e.g. sha256=')}
            {hmacInput('timestampHeader', 'Timestamp header', 'optional: then <timestamp>.<body> is signed, 5 minutes’ tolerance')}
          </div>
        </fieldset>
      )}
      {type && (
        <details class="mapping" open={type === 'hmac' || Object.keys(errors.fields).some((k) => k.startsWith('mapping.'))}>
          <summary>Mapping{type === 'hmac' ? '' : ' (optional: the preset types and keys every delivery)'}</summary>
          <MappingFields state={mapping} onChange={setMapping} errors={errors.fields} />
        </details>
      )}
      <Alert message={errors.form} />
      <div class="actions">
        <button class="button primary" type="submit" disabled={busy || !type}>
          {busy ? 'Adding…' : 'Add source'}
        </button>
      </div>
    </form>
  );
}
