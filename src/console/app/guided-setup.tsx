import { useId, useState } from 'preact/hooks';
import { CopyField, Field } from './components.js';
import type { FieldErrors } from './form-errors.js';
import { REDACTED, SchemaFields, type SchemaField, type SchemaFormState } from './schema-form.js';
import type { SetupGuide, TestResult } from './types.js';

/** A service-account key as Google gives it, or why the text is not one. */
export function readServiceAccountKey(text: string): { email: string } | { problem: string } | undefined {
  if (text.trim() === '') return undefined;
  let key: unknown;
  try {
    key = JSON.parse(text);
  } catch {
    return { problem: 'This is not the key file: give the JSON file Google downloaded (it starts with {).' };
  }
  const k = key as { type?: unknown; client_email?: unknown; private_key?: unknown };
  if (k.type !== 'service_account' || typeof k.client_email !== 'string' || typeof k.private_key !== 'string') {
    return { problem: 'This JSON is not a service-account key: create one in Google Cloud (Service accounts → Keys → Add key → JSON) and give that file.' };
  }
  return { email: k.client_email };
}

/** Text with its web addresses as links (a test's answer names the page that fixes it). */
export function Linked({ text }: { text: string }) {
  const parts = text.split(/(https:\/\/[^\s)]+[^\s).,])/);
  return <>{parts.map((part, i) => (i % 2 === 1 ? <a key={i} href={part} target="_blank" rel="noopener noreferrer">{part}</a> : part))}</>;
}

/** The steps to take outside Tributary, each with a link to the page where it is done and what to copy there. */
export function SetupSteps({ guide }: { guide: SetupGuide }) {
  return (
    <ol class="setup-steps" aria-label="Before you start">
      {guide.steps.map((step, i) => (
        <li key={step.text}>
          {step.text}
          {step.url && (
            <>
              {' '}
              <a href={step.url} target="_blank" rel="noopener noreferrer">
                Open the page
              </a>
            </>
          )}
          {step.code && <CopyField value={step.code} label={`Copy the text of step ${i + 1}`} multiline />}
        </li>
      ))}
    </ol>
  );
}

/**
 * The key as people have it: the downloaded file, or its text pasted. As soon as it reads as a
 * service-account key, its e-mail is shown with a copy button and what to do with it.
 */
export function KeyField({ guide, value, onChange, error, storedKeyFile }: { guide: SetupGuide; value: string; onChange: (text: string) => void; error?: string | undefined; storedKeyFile?: string | undefined }) {
  const fileId = useId();
  // A key read from its file is not shown: it is a password, and the page may be on a shared screen.
  const [fileName, setFileName] = useState<string | null>(null);
  const read = readServiceAccountKey(value);
  const choose = async (e: Event) => {
    const file = (e.currentTarget as HTMLInputElement).files?.[0];
    if (!file) return;
    setFileName(file.name);
    onChange(await file.text());
  };
  return (
    <div class="key-field">
      <div class="field">
        <label for={fileId}>Service-account key file</label>
        <input id={fileId} type="file" accept=".json,application/json" onChange={choose} />
      </div>
      <Field
        label="…or paste the key"
        error={error ?? (read && 'problem' in read ? read.problem : undefined)}
        hint={storedKeyFile ? `A key is stored (${storedKeyFile}); give another to replace it.` : 'Kept as a file readable by Tributary only, never shown again.'}
      >
        {(p) => (
          <textarea
            {...p}
            class="mono"
            rows={3}
            spellcheck={false}
            placeholder={fileName ? `Read from ${fileName}` : '{"type": "service_account", …}'}
            value={fileName ? '' : value}
            onInput={(e) => {
              setFileName(null);
              onChange(e.currentTarget.value);
            }}
          />
        )}
      </Field>
      {read && 'email' in read && (
        <div class="key-account" data-testid="key-account">
          <p>
            The key is for <strong>{read.email}</strong>.
          </p>
          <CopyField value={read.email} label="Copy the service account's e-mail" />
          {guide.afterKey && <p class="hint">{guide.afterKey.replace('{email}', read.email)}</p>}
        </div>
      )}
    </div>
  );
}

/** The result of Test, failing or not, in the form. */
export function TestOutcome({ result }: { result: TestResult | null }) {
  return (
    <div class="alert-slot" role="status" data-testid="settings-test">
      {result &&
        (result.ok ? (
          <p class="alert success">Test passed: the destination works with these settings.{result.notes?.length ? ` ${result.notes.join(' ')}` : ''}</p>
        ) : (
          <p class="alert error">
            <Linked text={result.error?.message ?? 'The test failed.'} />
          </p>
        ))}
    </div>
  );
}

/**
 * A connector's settings as its guide orders them: the steps, the few settings that matter first
 * with labels a person understands, the key, and everything else under "Advanced", closed.
 */
export function GuidedSettings({
  guide,
  fields,
  state,
  onChange,
  errors,
  original,
}: {
  guide: SetupGuide;
  fields: SchemaField[];
  state: SchemaFormState;
  onChange: (s: SchemaFormState) => void;
  errors: FieldErrors;
  original: Record<string, unknown>;
}) {
  const primaryNames = new Set(guide.primary.map((p) => p.setting));
  const primary: SchemaField[] = [];
  for (const p of guide.primary) {
    const f = fields.find((x) => x.name === p.setting);
    if (f) primary.push({ ...f, schema: { ...f.schema, title: p.label, description: p.hint } });
  }
  const advanced = fields.filter((f) => !primaryNames.has(f.name) && f.name !== guide.keySetting);
  const keyText = guide.keySetting && typeof state[guide.keySetting] === 'string' ? (state[guide.keySetting] as string) : '';
  // A key saved before keys were kept as files comes back redacted: it is there, and stays unless replaced.
  const storedInline = guide.keySetting !== undefined && JSON.stringify(original[guide.keySetting]) === JSON.stringify(REDACTED);
  const storedKeyFile = typeof original.keyFile === 'string' ? original.keyFile : storedInline ? 'inline, redacted' : undefined;
  return (
    <>
      <SetupSteps guide={guide} />
      <SchemaFields fields={primary} state={state} onChange={onChange} errors={errors} original={original} />
      {guide.keySetting && <KeyField guide={guide} value={storedInline && keyText === JSON.stringify(REDACTED, null, 2) ? '' : keyText} onChange={(text) => onChange({ ...state, [guide.keySetting!]: text })} error={errors[guide.keySetting]} storedKeyFile={storedKeyFile} />}
      <details class="advanced" data-testid="advanced-settings">
        <summary>Advanced</summary>
        <p class="hint">Each has a default that suits most uses; leave it empty to keep it.</p>
        <SchemaFields fields={advanced} state={state} onChange={onChange} errors={errors} original={original} />
      </details>
    </>
  );
}
