import type { TrackerInput } from './api.js';
import { Field } from './components.js';
import type { FieldErrors } from './form-errors.js';
import { parseList } from './format.js';
import type { Tracker } from './types.js';

export interface TrackerFormValues {
  name: string;
  id: string;
  timeZone: string;
  cors: string;
  rate: string;
  burst: string;
  captureContext: boolean;
  dedupWindowHours: string;
  partitions: string;
  archiveDays: string;
}

export function valuesOf(tracker?: Tracker): TrackerFormValues {
  return {
    name: tracker?.name ?? '',
    id: '',
    timeZone: tracker?.timeZone ?? 'UTC',
    cors: tracker ? tracker.corsOrigins.join('\n') : '*',
    rate: tracker?.rateLimit ? String(tracker.rateLimit.recordsPerSecond) : '',
    burst: tracker?.rateLimit?.burst !== undefined ? String(tracker.rateLimit.burst) : '',
    captureContext: tracker?.captureContext ?? false,
    dedupWindowHours: String(tracker?.dedupWindowHours ?? 24),
    partitions: String(tracker?.partitions ?? 1),
    archiveDays: String(tracker?.archiveDays ?? 30),
  };
}

/** The server names fields by their path (`corsOrigins.1`, `rateLimit.burst`); the form has one control each. */
export function trackerFieldKey(field: string): string | undefined {
  if (field.startsWith('rateLimit.burst')) return 'burst';
  const first = field.split('.')[0]!;
  const known: Record<string, string> = { name: 'name', id: 'id', timeZone: 'timeZone', corsOrigins: 'cors', rateLimit: 'rate', captureContext: 'captureContext', dedupWindowHours: 'dedupWindowHours', partitions: 'partitions', archiveDays: 'archiveDays' };
  return known[first];
}

/** Checks what the browser can check; the server checks the rest and names the field. */
export function checkValues(v: TrackerFormValues): FieldErrors {
  const errors: FieldErrors = {};
  if (v.name.trim() === '') errors.name = 'A tracker needs a name.';
  if (v.rate.trim() !== '' && !(Number(v.rate) > 0)) errors.rate = 'A number of records per second greater than 0, or empty for no limit.';
  if (v.burst.trim() !== '' && !(Number.isInteger(Number(v.burst)) && Number(v.burst) > 0)) errors.burst = 'A whole number of records greater than 0, or empty.';
  if (v.burst.trim() !== '' && v.rate.trim() === '') errors.burst = 'A burst needs a rate limit.';
  const hours = Number(v.dedupWindowHours);
  if (v.dedupWindowHours.trim() === '' || !Number.isInteger(hours) || hours < 0 || hours > 168) errors.dedupWindowHours = 'A whole number of hours from 0 (off) to 168 (7 days).';
  const partitions = Number(v.partitions);
  if (v.partitions.trim() === '' || !Number.isInteger(partitions) || partitions < 1 || partitions > 64) errors.partitions = 'A whole number of partitions from 1 to 64.';
  const days = Number(v.archiveDays);
  if (v.archiveDays.trim() === '' || !Number.isInteger(days) || days < 0 || days > 3650) errors.archiveDays = 'A whole number of days from 0 (no archive) to 3650.';
  return errors;
}

export function inputOf(v: TrackerFormValues, create: boolean): TrackerInput {
  const origins = parseList(v.cors);
  const input: TrackerInput = {
    name: v.name.trim(),
    timeZone: v.timeZone.trim() || 'UTC',
    corsOrigins: origins.length > 0 ? origins : ['*'],
    captureContext: v.captureContext,
    dedupWindowHours: Number(v.dedupWindowHours),
    partitions: Number(v.partitions),
    archiveDays: Number(v.archiveDays),
  };
  if (v.rate.trim() !== '') input.rateLimit = { recordsPerSecond: Number(v.rate), ...(v.burst.trim() !== '' ? { burst: Number(v.burst) } : {}) };
  else if (!create) input.rateLimit = null;
  if (create && v.id.trim() !== '') input.id = v.id.trim();
  return input;
}

let zones: string[] | undefined;
function timeZones(): string[] {
  zones ??= typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  return zones;
}

export function TrackerFields({ values, onChange, errors, withId }: { values: TrackerFormValues; onChange: (v: TrackerFormValues) => void; errors: FieldErrors; withId: boolean }) {
  const set = <K extends keyof TrackerFormValues>(key: K, value: TrackerFormValues[K]) => onChange({ ...values, [key]: value });
  const listId = withId ? 'time-zones-create' : 'time-zones-edit';
  return (
    <div class="form-grid">
      <Field label="Name" required error={errors.name}>
        {(p) => <input {...p} type="text" value={values.name} onInput={(e) => set('name', e.currentTarget.value)} />}
      </Field>
      {withId && (
        <Field label="Id (optional)" hint="Lowercase letters, digits, _ and -. Derived from the name when empty." error={errors.id}>
          {(p) => <input {...p} type="text" value={values.id} spellcheck={false} autoCapitalize="off" onInput={(e) => set('id', e.currentTarget.value)} />}
        </Field>
      )}
      <Field label="Time zone" hint="IANA zone used to read _event_at values sent without an offset." error={errors.timeZone}>
        {(p) => (
          <>
            <input {...p} type="text" list={listId} value={values.timeZone} spellcheck={false} onInput={(e) => set('timeZone', e.currentTarget.value)} />
            <datalist id={listId}>
              {timeZones().map((z) => (
                <option key={z} value={z} />
              ))}
            </datalist>
          </>
        )}
      </Field>
      <Field label="Allowed CORS origins" hint={<>One per line or comma separated, e.g. <code>https://shop.example</code>; <code>*</code> allows any origin. Servers and webhooks (no Origin header) are never refused.</>} error={errors.cors}>
        {(p) => <textarea {...p} rows={3} spellcheck={false} value={values.cors} onInput={(e) => set('cors', e.currentTarget.value)} />}
      </Field>
      <div class="field-row">
        <Field label="Rate limit (records per second)" hint="Sustained records per second, per API process. Empty: no limit." error={errors.rate}>
          {(p) => <input {...p} type="number" min="0" step="any" inputMode="decimal" value={values.rate} onInput={(e) => set('rate', e.currentTarget.value)} />}
        </Field>
        <Field label="Burst (records)" hint="Records allowed at once above the rate. Default: one second's worth." error={errors.burst}>
          {(p) => <input {...p} type="number" min="1" step="1" inputMode="numeric" value={values.burst} onInput={(e) => set('burst', e.currentTarget.value)} />}
        </Field>
      </div>
      <Field label="Deduplication window (hours)" hint={<>A record whose <code>_id</code> or <code>Idempotency-Key</code> was accepted this recently is answered but not stored again. 0 turns it off; at most 168 (7 days).</>} error={errors.dedupWindowHours}>
        {(p) => <input {...p} type="number" min="0" max="168" step="1" inputMode="numeric" value={values.dedupWindowHours} onInput={(e) => set('dedupWindowHours', e.currentTarget.value)} />}
      </Field>
      <Field label="Archive days" hint="Days of accepted records kept on disk, as accepted: the history a destination added later can be sent (backfill). 0 keeps none." error={errors.archiveDays}>
        {(p) => <input {...p} type="number" min="0" max="3650" step="1" inputMode="numeric" value={values.archiveDays} onInput={(e) => set('archiveDays', e.currentTarget.value)} />}
      </Field>
      <Field label="Partitions" hint={<>Records are spread over this many partitions by <code>_uid</code> (users) and <code>_sid</code> (sessions), each routed and delivered in parallel, one key's updates in order. For a tracker whose traffic outgrows one writer; it can grow, never shrink. Google Sheets takes 1 only.</>} error={errors.partitions}>
        {(p) => <input {...p} type="number" min="1" max="64" step="1" inputMode="numeric" value={values.partitions} onInput={(e) => set('partitions', e.currentTarget.value)} />}
      </Field>
      <Field inline label="Capture request context" hint="Store the client IP, user agent and referer with each record." error={errors.captureContext}>
        {(p) => <input {...p} type="checkbox" checked={values.captureContext} onChange={(e) => set('captureContext', e.currentTarget.checked)} />}
      </Field>
    </div>
  );
}
