import { Field } from './components.js';
import type { FieldErrors } from './form-errors.js';
import { MAPPED_FIELDS, type MappedField, type SourceMapping } from './types.js';

type From = 'preset' | 'header' | 'pointer' | 'literal';

export interface RuleState {
  from: From;
  value: string;
  prefix: string;
}

export type MappingState = Record<MappedField, RuleState>;

const VALUE_LABEL: Record<Exclude<From, 'preset'>, string> = { header: 'header name', pointer: 'JSON pointer', literal: 'text' };
const VALUE_HINT: Record<Exclude<From, 'preset'>, string> = { header: 'e.g. X-Event-Type', pointer: 'e.g. /data/object/id', literal: 'the same for every delivery' };

export function mappingState(mapping: SourceMapping = {}): MappingState {
  const out = {} as MappingState;
  for (const field of MAPPED_FIELDS) {
    const rule = mapping[field];
    if (!rule) out[field] = { from: 'preset', value: '', prefix: '' };
    else if (rule.header !== undefined) out[field] = { from: 'header', value: rule.header, prefix: rule.prefix };
    else if (rule.pointer !== undefined) out[field] = { from: 'pointer', value: rule.pointer, prefix: rule.prefix };
    else out[field] = { from: 'literal', value: rule.prefix, prefix: '' };
  }
  return out;
}

export function toMapping(state: MappingState): SourceMapping {
  const out: SourceMapping = {};
  for (const field of MAPPED_FIELDS) {
    const { from, value, prefix } = state[field];
    if (from === 'header') out[field] = { header: value.trim(), prefix };
    else if (from === 'pointer') out[field] = { pointer: value.trim(), prefix };
    else if (from === 'literal') out[field] = { prefix: value };
  }
  return out;
}

/** The server names a bad rule `mapping._id.pointer` (or `mapping._id`): shown under that field's rule. */
export function mappingKey(field: string): string | undefined {
  const m = /^mapping\.(_event|_id|_uid|_sid|_event_at)\b/.exec(field);
  return m ? `mapping.${m[1]}` : undefined;
}

/** One rule per reserved field: the preset's value, or from a header, a JSON pointer into the body, or a fixed text. */
export function MappingFields({ state, onChange, errors }: { state: MappingState; onChange: (s: MappingState) => void; errors: FieldErrors }) {
  const set = (field: MappedField, patch: Partial<RuleState>) => onChange({ ...state, [field]: { ...state[field], ...patch } });
  return (
    <div class="mapping-rules">
      {MAPPED_FIELDS.map((field) => {
        const rule = state[field];
        return (
          <div key={field} class="field-row mapping-rule">
            <Field label={`${field} from`} error={errors[`mapping.${field}`]}>
              {(p) => (
                <select {...p} value={rule.from} onChange={(e) => set(field, { from: e.currentTarget.value as From })}>
                  <option value="preset">the preset</option>
                  <option value="header">a header</option>
                  <option value="pointer">a JSON pointer</option>
                  <option value="literal">a fixed text</option>
                </select>
              )}
            </Field>
            {rule.from !== 'preset' && (
              <Field label={`${field} ${VALUE_LABEL[rule.from]}`} hint={VALUE_HINT[rule.from]}>
                {(p) => <input {...p} type="text" spellcheck={false} autoCapitalize="off" value={rule.value} onInput={(e) => set(field, { value: e.currentTarget.value })} />}
              </Field>
            )}
            {(rule.from === 'header' || rule.from === 'pointer') && (
              <Field label={`${field} prefix`} hint="text put before the value, e.g. crm.">
                {(p) => <input {...p} type="text" spellcheck={false} autoCapitalize="off" value={rule.prefix} onInput={(e) => set(field, { prefix: e.currentTarget.value })} />}
              </Field>
            )}
          </div>
        );
      })}
    </div>
  );
}
