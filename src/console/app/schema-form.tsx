import { Field } from './components.js';
import type { FieldErrors } from './form-errors.js';
import type { JsonSchema } from './types.js';

/** What the server shows in place of a stored secret; sent back, it keeps the secret. */
export const REDACTED = '[redacted]';

export type ControlKind = 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'json';

export interface SchemaField {
  name: string;
  schema: JsonSchema;
  required: boolean;
  control: ControlKind;
}

/** Text for every control but checkboxes. */
export type SchemaFormState = Record<string, string | boolean>;

/** `anyOf: [X, {type: 'null'}]` (a nullable setting) reads as X; any other union falls back to JSON. */
function resolve(schema: JsonSchema): JsonSchema {
  const union = schema.anyOf ?? schema.oneOf;
  if (!union) return schema;
  const members = union.filter((s) => s.type !== 'null');
  return members.length === 1 ? { ...members[0]!, description: schema.description ?? members[0]!.description } : { description: schema.description };
}

function controlOf(schema: JsonSchema): ControlKind {
  if (Array.isArray(schema.enum) && schema.enum.length > 0 && schema.enum.every((v) => typeof v === 'string')) return 'enum';
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  if (type === 'string' || type === 'number' || type === 'integer' || type === 'boolean') return type;
  return 'json';
}

export function fieldsOf(schema: JsonSchema | undefined): SchemaField[] {
  const required = new Set(schema?.required ?? []);
  return Object.entries(schema?.properties ?? {}).map(([name, raw]) => {
    const s = resolve(raw);
    return { name, schema: s, required: required.has(name), control: controlOf(s) };
  });
}

function booleanDefault(f: SchemaField): boolean {
  return f.schema.default === true;
}

export function initialState(fields: SchemaField[], settings: Record<string, unknown>): SchemaFormState {
  const state: SchemaFormState = {};
  for (const f of fields) {
    const value = settings[f.name];
    if (f.control === 'boolean') state[f.name] = typeof value === 'boolean' ? value : booleanDefault(f);
    else if (value === undefined || value === null) state[f.name] = '';
    else if (f.control === 'json') state[f.name] = JSON.stringify(value, null, 2);
    else state[f.name] = String(value);
  }
  return state;
}

/**
 * Settings from the form: empty controls are left out (the connector's default applies), numbers
 * that do not parse are sent as typed so the server names the field. Only JSON syntax and missing
 * required values are checked here; the connector's schema on the server checks everything else.
 */
export function toSettings(fields: SchemaField[], state: SchemaFormState, original: Record<string, unknown>): { settings: Record<string, unknown>; errors: FieldErrors } {
  const settings: Record<string, unknown> = {};
  const errors: FieldErrors = {};
  for (const f of fields) {
    const value = state[f.name];
    if (f.control === 'boolean') {
      if (value !== booleanDefault(f) || f.name in original) settings[f.name] = value === true;
      continue;
    }
    const text = typeof value === 'string' ? value.trim() : '';
    if (text === '') {
      if (f.required) errors[f.name] = `${f.name} is required.`;
      continue;
    }
    if (f.control === 'number' || f.control === 'integer') {
      const n = Number(text);
      settings[f.name] = Number.isFinite(n) ? n : text;
    } else if (f.control === 'json') {
      try {
        settings[f.name] = JSON.parse(text);
      } catch (err) {
        errors[f.name] = `Not valid JSON: ${(err as Error).message}`;
      }
    } else {
      settings[f.name] = text;
    }
  }
  return { settings, errors };
}

/** The server names a setting `settings.<name>[.<nested>]`; the form has one control per top-level name. */
export function settingKey(field: string, fields: SchemaField[]): string | undefined {
  if (!field.startsWith('settings.')) return undefined;
  const name = field.slice('settings.'.length).split('.')[0];
  return fields.some((f) => f.name === name) ? name : undefined;
}

function rangeHint(s: JsonSchema): string {
  if (s.minimum !== undefined && s.maximum !== undefined) return `${s.minimum.toLocaleString()} to ${s.maximum.toLocaleString()}.`;
  if (s.minimum !== undefined) return `At least ${s.minimum.toLocaleString()}.`;
  if (s.maximum !== undefined) return `At most ${s.maximum.toLocaleString()}.`;
  return '';
}

function hintOf(f: SchemaField, redacted: boolean): string | undefined {
  const parts = [f.schema.description ?? ''];
  if (f.control === 'number' || f.control === 'integer') parts.push(rangeHint(f.schema));
  if (f.control === 'json') parts.push('JSON.');
  if (f.schema.format === 'uri') parts.push('A URL.');
  if (redacted) parts.push(`The stored secret is hidden; leave "${REDACTED}" to keep it.`);
  // The name the CLI, the admin API and the config file use, under the words the form shows.
  if (f.schema.title !== undefined && f.schema.title !== f.name) parts.push(`Setting: ${f.name}.`);
  const text = parts.filter(Boolean).join(' ');
  return text || undefined;
}

export function SchemaFields({ fields, state, onChange, errors, original }: { fields: SchemaField[]; state: SchemaFormState; onChange: (s: SchemaFormState) => void; errors: FieldErrors; original: Record<string, unknown> }) {
  if (fields.length === 0) return <p class="hint">This destination type has no settings.</p>;
  const set = (name: string, value: string | boolean) => onChange({ ...state, [name]: value });
  return (
    <div class="form-grid">
      {fields.map((f) => {
        const label = f.schema.title ?? f.name;
        const value = state[f.name];
        const text = typeof value === 'string' ? value : '';
        const redacted = JSON.stringify(original[f.name]) === JSON.stringify(REDACTED);
        const common = { label, required: f.required, error: errors[f.name], hint: hintOf(f, redacted) };
        switch (f.control) {
          case 'boolean':
            return (
              <Field key={f.name} {...common} inline>
                {(p) => <input {...p} type="checkbox" checked={value === true} onChange={(e) => set(f.name, e.currentTarget.checked)} />}
              </Field>
            );
          case 'enum':
            return (
              <Field key={f.name} {...common}>
                {(p) => (
                  <select {...p} value={text} onChange={(e) => set(f.name, e.currentTarget.value)}>
                    {!f.required && <option value="">(default)</option>}
                    {(f.schema.enum as string[]).map((option) => (
                      <option key={option} value={option}>
                        {f.schema['x-enum-labels']?.[option] ?? option}
                      </option>
                    ))}
                  </select>
                )}
              </Field>
            );
          case 'number':
          case 'integer':
            return (
              <Field key={f.name} {...common}>
                {(p) => (
                  <input
                    {...p}
                    type="number"
                    inputMode={f.control === 'integer' ? 'numeric' : 'decimal'}
                    step={f.control === 'integer' ? '1' : 'any'}
                    min={f.schema.minimum}
                    max={f.schema.maximum}
                    placeholder={f.schema.default !== undefined ? String(f.schema.default) : undefined}
                    value={text}
                    onInput={(e) => set(f.name, e.currentTarget.value)}
                  />
                )}
              </Field>
            );
          case 'json':
            return (
              <Field key={f.name} {...common}>
                {(p) => <textarea {...p} class="mono" rows={4} spellcheck={false} value={text} onInput={(e) => set(f.name, e.currentTarget.value)} />}
              </Field>
            );
          default:
            // A secret (format password) is typed into a masked field; anything else into a text field.
            return (
              <Field key={f.name} {...common}>
                {(p) =>
                  f.schema.format === 'password' ? (
                    <input {...p} type="password" autoComplete="new-password" value={text} onInput={(e) => set(f.name, e.currentTarget.value)} />
                  ) : (
                    <input
                      {...p}
                      type="text"
                      inputMode={f.schema.format === 'uri' ? 'url' : undefined}
                      spellcheck={false}
                      autoCapitalize="off"
                      placeholder={typeof f.schema.default === 'string' ? f.schema.default : undefined}
                      value={text}
                      onInput={(e) => set(f.name, e.currentTarget.value)}
                    />
                  )
                }
              </Field>
            );
        }
      })}
    </div>
  );
}
