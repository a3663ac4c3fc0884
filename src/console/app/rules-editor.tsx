import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, ApiError, messageOf } from './api.js';
import { Alert, Field, Status } from './components.js';
import { fieldMessage } from './form-errors.js';
import { formatCount, formatTime } from './format.js';
import type { DestinationRules, DestinationView, RulesPreview } from './types.js';

/** How long typing pauses before the preview runs the draft (one request per pause, not per key). */
const PREVIEW_DELAY_MS = 300;
/** Records the live preview runs the draft over. */
const PREVIEW_RECORDS = 50;

type Selection = 'all' | 'keep' | 'drop';

/** The editor's fields, as text the way people type them. */
interface Draft {
  filter: string;
  /** Percent, e.g. `10`; empty: no sample. */
  samplePercent: string;
  sampleBy: string;
  selection: Selection;
  /** Comma-separated property names. */
  names: string;
  /** One `old=new` a line. */
  renames: string;
  flatten: boolean;
  separator: string;
  depth: string;
}

function draftOf(rules: DestinationRules | undefined): Draft {
  const flatten = rules?.flatten === true ? {} : rules?.flatten;
  return {
    filter: rules?.filter ?? '',
    samplePercent: rules?.sample ? String(rules.sample.rate * 100) : '',
    sampleBy: rules?.sample?.by ?? '',
    selection: rules?.keep ? 'keep' : rules?.drop ? 'drop' : 'all',
    names: (rules?.keep ?? rules?.drop ?? []).join(', '),
    renames: Object.entries(rules?.rename ?? {})
      .map(([from, to]) => `${from}=${to}`)
      .join('\n'),
    flatten: rules?.flatten !== undefined,
    separator: flatten?.separator ?? '',
    depth: flatten?.depth === undefined ? '' : String(flatten.depth),
  };
}

/** The rules a draft says, or the fields it cannot say them with (checked here; the server checks the rest). */
function rulesOf(d: Draft): { rules: DestinationRules; errors: Record<string, string> } {
  const rules: DestinationRules = {};
  const errors: Record<string, string> = {};
  if (d.filter.trim() !== '') rules.filter = d.filter;
  if (d.samplePercent.trim() !== '') {
    const percent = Number(d.samplePercent);
    if (!(percent > 0 && percent <= 100)) errors.sample = 'A share above 0 and at most 100 %.';
    else rules.sample = { rate: percent / 100, ...(d.sampleBy.trim() ? { by: d.sampleBy.trim() } : {}) };
  }
  const names = d.names.split(',').map((n) => n.trim()).filter(Boolean);
  if (d.selection !== 'all') {
    if (names.length === 0) errors.names = `Name the properties to ${d.selection}, separated by commas.`;
    else rules[d.selection] = names;
  }
  const rename: Record<string, string> = {};
  for (const line of d.renames.split('\n').map((l) => l.trim()).filter(Boolean)) {
    const eq = line.indexOf('=');
    if (eq <= 0 || eq === line.length - 1) errors.renames = `Write each rename as old=new, one a line: ${line}`;
    else rename[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
  }
  if (Object.keys(rename).length > 0) rules.rename = rename;
  if (d.flatten) {
    const depth = d.depth.trim() === '' ? undefined : Number(d.depth);
    if (depth !== undefined && !(Number.isInteger(depth) && depth >= 1 && depth <= 10)) errors.flatten = 'Levels: a whole number from 1 to 10.';
    const options = { ...(d.separator !== '' ? { separator: d.separator } : {}), ...(depth !== undefined ? { depth } : {}) };
    rules.flatten = Object.keys(options).length > 0 ? options : true;
  }
  return { rules, errors };
}

/** The server names a rule (`rules.filter`, `rules.rename.total`…); the editor shows it under its field. */
function fieldOfRule(field: string | undefined): keyof Draft | 'sample' | 'flatten' | undefined {
  const rule = field?.split('.')[1];
  if (rule === 'filter') return 'filter';
  if (rule === 'keep' || rule === 'drop') return 'names';
  if (rule === 'rename') return 'renames';
  if (rule === 'sample') return 'sample';
  if (rule === 'flatten') return 'flatten';
  return undefined;
}

const records = (n: number) => `${formatCount(n)} record${n === 1 ? '' : 's'}`;

const OUTCOME_LABEL: Readonly<Record<RulesPreview['records'][number]['outcome'], string>> = { deliver: 'Delivered', filter: 'Filtered out', sample: 'Outside the sample', error: 'Filter failed' };

/**
 * A destination's rules: which records it receives and in what shape. Every change of a field runs
 * the draft over the tracker's last records (the same compiled rules the router runs), so the owner
 * sees what the destination would receive before saving.
 */
export function RulesEditor({ trackerId, destination, onSaved }: { trackerId: string; destination: DestinationView; onSaved: () => void }) {
  const [draft, setDraft] = useState<Draft>(() => draftOf(destination.rules));
  const [preview, setPreview] = useState<RulesPreview | null>(null);
  const [serverError, setServerError] = useState<{ field: string | undefined; message: string } | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const { rules, errors } = useMemo(() => rulesOf(draft), [draft]);
  const text = JSON.stringify(rules);
  const set = (patch: Partial<Draft>) => {
    setDraft((d) => ({ ...d, ...patch }));
    setStatus(null);
  };

  useEffect(() => {
    if (Object.keys(errors).length > 0) return;
    let current = true;
    const timer = window.setTimeout(async () => {
      try {
        const result = await api.destinations.preview(trackerId, { rules, limit: PREVIEW_RECORDS });
        if (!current) return;
        setPreview(result);
        setServerError(null);
      } catch (err) {
        if (current) setServerError({ field: fieldOfRule(err instanceof ApiError ? err.field : undefined), message: err instanceof ApiError && err.field ? fieldMessage(err) : messageOf(err) });
      }
    }, PREVIEW_DELAY_MS);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [trackerId, text]);

  const fieldError = (name: string) => errors[name] ?? (serverError?.field === name ? serverError.message : undefined);

  const save = async (e: Event) => {
    e.preventDefault();
    if (Object.keys(errors).length > 0) return;
    setBusy(true);
    try {
      await api.destinations.update(trackerId, destination.id, { rules: Object.keys(rules).length > 0 ? rules : null });
      setStatus('Rules saved: they apply to the records routed from now on.');
      onSaved();
    } catch (err) {
      setServerError({ field: fieldOfRule(err instanceof ApiError ? err.field : undefined), message: err instanceof ApiError && err.field ? fieldMessage(err) : messageOf(err) });
    } finally {
      setBusy(false);
    }
  };

  const { skipped, lastFilterError } = destination.status;
  return (
    <section class="card" aria-labelledby="rules-heading" data-testid="rules-editor">
      <h2 id="rules-heading">Rules</h2>
      <p class="hint">
        Which records {destination.id} receives, and in what shape. The filter runs first, on the record as accepted, then the sample, then flatten, keep or drop, rename. Reserved fields (<code>_id</code>, <code>_uid</code>, <code>_event</code>…) always go as they are. So far its rules kept{' '}
        <span data-testid="rules-skipped">
          {records(skipped.filter)} out by the filter, {records(skipped.sample)} outside the sample, and {records(skipped.filterErrors)} where the filter failed
        </span>
        {lastFilterError && <> (last: {lastFilterError})</>}.
      </p>
      <form onSubmit={save} noValidate aria-label={`Rules of ${destination.id}`}>
        <Field label="Filter" error={fieldError('filter')} hint={<>A CEL expression; the destination receives the records for which it is true, e.g. <code>_type == 'event' &amp;&amp; _event in ['signup', 'order']</code>. Empty: every record.</>}>
          {(p) => <textarea {...p} class="mono" rows={2} spellcheck={false} value={draft.filter} onInput={(e) => set({ filter: e.currentTarget.value })} data-testid="rules-filter" />}
        </Field>
        <div class="field-row">
          <Field label="Sample, %" error={fieldError('sample')} hint="Empty: every record. Deterministic: a user is in or out with all their records.">
            {(p) => <input {...p} type="number" min="0" max="100" step="any" value={draft.samplePercent} onInput={(e) => set({ samplePercent: e.currentTarget.value })} />}
          </Field>
          <Field label="Sampled by" hint="Default _uid (else _id).">
            {(p) => <input {...p} type="text" spellcheck={false} value={draft.sampleBy} onInput={(e) => set({ sampleBy: e.currentTarget.value })} />}
          </Field>
        </div>
        <div class="field-row">
          <Field label="Properties">
            {(p) => (
              <select {...p} value={draft.selection} onChange={(e) => set({ selection: e.currentTarget.value as Selection })} data-testid="rules-selection">
                <option value="all">All of them</option>
                <option value="keep">Only these</option>
                <option value="drop">All but these</option>
              </select>
            )}
          </Field>
          {draft.selection !== 'all' && (
            <Field label={draft.selection === 'keep' ? 'Kept' : 'Dropped'} error={fieldError('names')} hint="Names after flattening, separated by commas; * matches any run of characters (utm_*).">
              {(p) => <input {...p} type="text" spellcheck={false} value={draft.names} onInput={(e) => set({ names: e.currentTarget.value })} data-testid="rules-names" />}
            </Field>
          )}
        </div>
        <Field label="Renames" error={fieldError('renames')} hint="One old=new a line, e.g. total=amount.">
          {(p) => <textarea {...p} class="mono" rows={2} spellcheck={false} value={draft.renames} onInput={(e) => set({ renames: e.currentTarget.value })} data-testid="rules-renames" />}
        </Field>
        <Field inline label="Flatten nested objects into columns (address.city → address_city)" error={fieldError('flatten')}>
          {(p) => <input {...p} type="checkbox" checked={draft.flatten} onChange={(e) => set({ flatten: e.currentTarget.checked })} data-testid="rules-flatten" />}
        </Field>
        {draft.flatten && (
          <div class="field-row">
            <Field label="Separator" hint="Default _.">
              {(p) => <input {...p} type="text" value={draft.separator} onInput={(e) => set({ separator: e.currentTarget.value })} />}
            </Field>
            <Field label="Levels" hint="Default 10.">
              {(p) => <input {...p} type="number" min="1" max="10" value={draft.depth} onInput={(e) => set({ depth: e.currentTarget.value })} />}
            </Field>
          </div>
        )}
        <Alert message={serverError && !serverError.field ? serverError.message : null} />
        <div class="actions">
          <button class="button primary" type="submit" disabled={busy || Object.keys(errors).length > 0}>
            {busy ? 'Saving…' : 'Save rules'}
          </button>
          <Status message={status} />
        </div>
      </form>
      <RulesPreviewTable preview={preview} />
    </section>
  );
}

function RulesPreviewTable({ preview }: { preview: RulesPreview | null }) {
  if (!preview) return <p class="hint">Preview: waiting for the tracker's last records…</p>;
  const { examined, delivered, filtered, sampled, errors } = preview.counts;
  if (examined === 0) return <p class="empty">No recent records to preview the rules on: send some, and they show here.</p>;
  return (
    <>
      <h3>Preview</h3>
      <p role="status" data-testid="rules-preview-counts">
        Of the last {formatCount(examined)} records: {formatCount(delivered)} delivered, {formatCount(filtered)} filtered out, {formatCount(sampled)} outside the sample, {formatCount(errors)} where the filter failed.
      </p>
      <div class="table-wrap">
        <table data-testid="rules-preview">
          <caption class="visually-hidden">The tracker's last records, oldest first, with what the rules make of each</caption>
          <thead>
            <tr>
              <th scope="col">Received</th>
              <th scope="col">Outcome</th>
              <th scope="col">Record (as delivered; as accepted when not)</th>
            </tr>
          </thead>
          <tbody>
            {preview.records.map(({ outcome, error, record }) => (
              <tr key={record.id} data-outcome={outcome}>
                <td class="mono">{formatTime(record.receivedAt)}</td>
                <td>{OUTCOME_LABEL[outcome]}</td>
                <td class="wrap mono">
                  {[record.kind, record.event, record.uid && `uid ${record.uid}`].filter(Boolean).join(' ')} {JSON.stringify(record.properties)}
                  {error && <span class="warn"> — {error}</span>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
