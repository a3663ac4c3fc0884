import { useState } from 'preact/hooks';
import { CopyField, Field } from './components.js';
import { RECORD_KINDS, type RecordKind } from './types.js';

const ID_FIELD: Record<RecordKind, string> = { event: '_event', user: '_uid', session: '_sid' };
const ALLOWED: Record<RecordKind, readonly string[]> = { event: ['_event', '_uid', '_sid', '_event_at'], user: ['_uid'], session: ['_sid', '_uid'] };
const RESPONSES = { json: '', pixel: '/tracker.gif', script: '/tracker.js' } as const;
type ResponseForm = keyof typeof RESPONSES;

export interface Pair {
  key: string;
  value: string;
}

/** `key=value` lines; a line without `=` is a key with an empty value. */
export function parsePairs(text: string): Pair[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const eq = line.indexOf('=');
      return eq < 0 ? { key: line, value: '' } : { key: line.slice(0, eq).trim(), value: line.slice(eq + 1).trim() };
    });
}

export function webhookUrl(baseUrl: string, kind: RecordKind, response: ResponseForm, token: string, pairs: Pair[]): string {
  // encodeURIComponent writes a space as %20: a `+` would also read as a space, but %20 survives every relay.
  const query = [{ key: '_token', value: token }, ...pairs].map((p) => `${encodeURIComponent(p.key)}=${encodeURIComponent(p.value)}`).join('&');
  return `${baseUrl}/v3/${kind}${RESPONSES[response]}?${query}`;
}

/** A GET URL for services that can only call a URL (webhooks, no-code tools), built field by field. */
export function WebhookBuilder({ baseUrl, token }: { baseUrl: string; token: string }) {
  const [kind, setKind] = useState<RecordKind>('event');
  const [id, setId] = useState('signup');
  const [fields, setFields] = useState('plan=pro');
  const [response, setResponse] = useState<ResponseForm>('json');
  const idField = ID_FIELD[kind];
  const pairs = [...(id.trim() ? [{ key: idField, value: id.trim() }] : []), ...parsePairs(fields)];
  const reserved = pairs.filter((p) => /^_[^_]/.test(p.key) && !ALLOWED[kind].includes(p.key)).map((p) => p.key);
  const url = webhookUrl(baseUrl, kind, response, token, pairs);

  return (
    <section class="card" aria-labelledby="webhook-heading">
      <h2 id="webhook-heading">Webhook URL builder</h2>
      <p class="hint">
        For services that can only call a URL. Values arrive as strings. A service that POSTs its own JSON to this URL has its body merged over these parameters.
      </p>
      <div class="form-grid">
        <div class="field-row">
          <Field label="Record kind">
            {(p) => (
              <select {...p} value={kind} onChange={(e) => setKind(e.currentTarget.value as RecordKind)}>
                {RECORD_KINDS.map((k) => (
                  <option key={k} value={k}>
                    {k}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Response">
            {(p) => (
              <select {...p} value={response} onChange={(e) => setResponse(e.currentTarget.value as ResponseForm)}>
                <option value="json">JSON (202)</option>
                <option value="pixel">1×1 GIF (tracker.gif)</option>
                <option value="script">empty script (tracker.js)</option>
              </select>
            )}
          </Field>
        </div>
        <Field label={idField} required hint={kind === 'event' ? 'The event name, e.g. stripe.invoice.paid.' : `The ${kind}'s identifier.`}>
          {(p) => <input {...p} type="text" value={id} spellcheck={false} onInput={(e) => setId(e.currentTarget.value)} />}
        </Field>
        <Field
          label="Other fields"
          hint={<>One <code>key=value</code> per line. Names with one leading underscore are reserved ({ALLOWED[kind].filter((k) => k !== idField).join(', ') || 'none other'} allowed here).</>}
          error={reserved.length > 0 ? `Reserved names the server will refuse: ${reserved.join(', ')}` : undefined}
        >
          {(p) => <textarea {...p} rows={3} spellcheck={false} value={fields} onInput={(e) => setFields(e.currentTarget.value)} />}
        </Field>
      </div>
      <p class="output-label" id="webhook-url-label">
        Webhook URL
      </p>
      <div aria-labelledby="webhook-url-label" data-testid="webhook-url">
        <CopyField value={url} label="Copy webhook URL" multiline />
      </div>
    </section>
  );
}
