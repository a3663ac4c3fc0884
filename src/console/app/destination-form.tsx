import { useMemo, useRef, useState } from 'preact/hooks';
import { api } from './api.js';
import { Alert, Field } from './components.js';
import { useFormErrors } from './form-errors.js';
import { fieldsOf, initialState, SchemaFields, settingKey, toSettings, type SchemaFormState } from './schema-form.js';
import { GuidedSettings, TestOutcome } from './guided-setup.js';
import type { ConnectorInfo, Destination, TestResult } from './types.js';

/**
 * Adds a destination (type chosen first, then its settings) or edits the settings of one. The
 * connector's settings schema draws the fields; the server's verdict on a bad setting is shown
 * under the field it names.
 */
export function DestinationForm({ trackerId, connectors, existing, onSaved, onCancel }: { trackerId: string; connectors: ConnectorInfo[]; existing?: Destination; onSaved: (d: Destination) => void; onCancel?: () => void }) {
  const [type, setType] = useState(existing?.type ?? '');
  const [id, setId] = useState('');
  const [enabled, setEnabled] = useState(true);
  const connector = connectors.find((c) => c.type === type);
  const fields = useMemo(() => fieldsOf(connector?.settingsSchema), [connector]);
  const original = existing?.settings ?? {};
  const [state, setState] = useState<SchemaFormState>(() => initialState(fields, original));
  const [busy, setBusy] = useState(false);
  const [testing, setTesting] = useState(false);
  const [tested, setTested] = useState<TestResult | null>(null);
  const form = useRef<HTMLFormElement>(null);
  const errors = useFormErrors(form);
  const prefix = existing ? `edit-${existing.id}` : 'add';

  const chooseType = (next: string) => {
    setType(next);
    setTested(null);
    const c = connectors.find((k) => k.type === next);
    setState(initialState(fieldsOf(c?.settingsSchema), {}));
    errors.clear();
  };

  /**
   * Settings to send. A new key replaces the stored one: the stored key's file (shown under Advanced)
   * is not sent with it, which the schema would refuse as two credentials. Likewise a connection
   * string pasted in an edit replaces the parts the last one was split into, unless changed here:
   * sent along, they would win over it, the old password among them.
   */
  const formSettings = () => {
    const result = toSettings(fields, state, original);
    const keySetting = connector?.setup?.keySetting;
    if (keySetting && result.settings[keySetting] !== undefined && result.settings.keyFile === original.keyFile) delete result.settings.keyFile;
    const splits = connector?.setup?.splits;
    if (existing && splits && result.settings[splits.setting] !== undefined) {
      const saved = initialState(fields, original);
      for (const name of splits.into) if (state[name] === saved[name]) delete result.settings[name];
    }
    return result;
  };

  // Before saving: the connector's own test on what the form holds, with its answer as the next step.
  const test = async () => {
    if (!connector) return errors.setFields({ type: 'Choose a destination type.' });
    const { settings, errors: local } = formSettings();
    if (Object.keys(local).length > 0) return errors.setFields(local);
    setTesting(true);
    setTested(null);
    errors.clear();
    try {
      setTested(await api.destinations.testSettings(trackerId, { type, settings, ...(existing ? { id: existing.id } : id.trim() ? { id: id.trim() } : {}) }));
    } catch (err) {
      errors.fail(err, (field) => (field === 'id' || field === 'type' ? field : settingKey(field, fields)));
    } finally {
      setTesting(false);
    }
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!connector) return errors.setFields({ type: 'Choose a destination type.' });
    const { settings, errors: local } = formSettings();
    if (Object.keys(local).length > 0) return errors.setFields(local);
    setBusy(true);
    errors.clear();
    try {
      const saved = existing
        ? await api.destinations.update(trackerId, existing.id, { settings })
        : await api.destinations.add(trackerId, { type, settings, enabled, ...(id.trim() ? { id: id.trim() } : {}) });
      onSaved(saved);
    } catch (err) {
      errors.fail(err, (field) => (field === 'id' || field === 'type' ? field : settingKey(field, fields)));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form ref={form} onSubmit={submit} noValidate class="destination-form" aria-label={existing ? `Settings of ${existing.id}` : 'New destination'} data-testid={`${prefix}-destination-form`}>
      {!existing && (
        <div class="field-row">
          <Field label="Type" required error={errors.fields.type}>
            {(p) => (
              <select {...p} value={type} onChange={(e) => chooseType(e.currentTarget.value)}>
                <option value="" disabled>
                  Choose a type…
                </option>
                {connectors.map((c) => (
                  <option key={c.type} value={c.type}>
                    {c.type}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Id (optional)" hint="Defaults to the type." error={errors.fields.id}>
            {(p) => <input {...p} type="text" spellcheck={false} autoCapitalize="off" value={id} onInput={(e) => setId(e.currentTarget.value)} />}
          </Field>
        </div>
      )}
      {connector && (
        <>
          {connector.description && <p class="hint">{connector.description}</p>}
          <fieldset>
            <legend>{connector.type} settings</legend>
            {connector.setup ? (
              <GuidedSettings key={connector.type} guide={connector.setup} fields={fields} state={state} onChange={setState} errors={errors.fields} original={original} />
            ) : (
              <SchemaFields key={connector.type} fields={fields} state={state} onChange={setState} errors={errors.fields} original={original} />
            )}
          </fieldset>
          {!existing && (
            <Field inline label="Enabled" hint="A disabled destination keeps its queued records until it is enabled.">
              {(p) => <input {...p} type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} />}
            </Field>
          )}
        </>
      )}
      <Alert message={errors.form} />
      <TestOutcome result={tested} />
      <div class="actions">
        <button class="button primary" type="submit" disabled={busy || !type}>
          {busy ? 'Saving…' : existing ? 'Save settings' : 'Add destination'}
        </button>
        <button class="button" type="button" onClick={test} disabled={testing || !type}>
          {testing ? 'Testing…' : 'Test'}
        </button>
        {onCancel && (
          <button class="button ghost" type="button" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}
