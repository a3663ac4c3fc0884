import { useState } from 'preact/hooks';
import { Alert, Field, Spinner, Status } from './components.js';
import { formatTime } from './format.js';
import { useLoad } from './hooks.js';
import type { RequestEntry, RequestFilter, RequestPage } from './request-types.js';

/** The kept lists change as requests arrive; a glance every few seconds is enough. */
const REFRESH_MS = 5000;

const NO_FILTER: RequestFilter = { status: '', code: '', text: '' };

const STATUS_CHOICES: Array<[string, string]> = [
  ['', 'Any status'],
  ['accepted', 'Accepted (below 400)'],
  ['refused', 'Refused (400 and above)'],
  ['2xx', '2xx'],
  ['4xx', '4xx'],
  ['5xx', '5xx'],
  ['401', '401 (token)'],
  ['429', '429 (rate limit)'],
];

function stateOf(e: RequestEntry): 'rejected' | 'partial' | 'duplicate' | 'accepted' {
  if (e.status >= 400) return 'rejected';
  if (e.rejected) return 'partial';
  if (e.duplicates && e.records === 0) return 'duplicate';
  return 'accepted';
}

function outcome(e: RequestEntry): string {
  if (e.status >= 400) return `refused ${e.code ?? ''}`.trim();
  const parts = [`${e.records} stored`];
  if (e.duplicates) parts.push(`${e.duplicates} duplicate${e.duplicates === 1 ? '' : 's'}`);
  if (e.rejected) parts.push(`${e.rejected} refused (${e.code ?? '?'})`);
  return parts.join(', ');
}

/**
 * A searchable list of kept requests, newest first: a tracker's history, or the relay's requests
 * with an unknown token. The search runs on the server (status, code, text).
 */
export function RequestHistory({ load, listKey, label, empty, showToken = false }: { load: (filter: RequestFilter) => Promise<RequestPage>; listKey: string; label: string; empty: string; showToken?: boolean }) {
  const [draft, setDraft] = useState<RequestFilter>(NO_FILTER);
  const [applied, setApplied] = useState<RequestFilter>(NO_FILTER);
  const page = useLoad(() => load(applied), `${listKey}?${JSON.stringify(applied)}`, REFRESH_MS);
  const filtered = applied.status !== '' || applied.code.trim() !== '' || applied.text.trim() !== '';

  const submit = (e: Event) => {
    e.preventDefault();
    setApplied({ ...draft });
  };
  const reset = () => {
    setDraft(NO_FILTER);
    setApplied(NO_FILTER);
  };
  const data = page.data;
  const summary = !data
    ? null
    : filtered
      ? `${data.matched} of the ${data.total} kept requests match${data.entries.length < data.matched ? `; the newest ${data.entries.length} are shown` : ''}.`
      : `${data.total} request${data.total === 1 ? '' : 's'} kept${data.entries.length < data.total ? `; the newest ${data.entries.length} are shown` : ''}.`;

  return (
    <>
      <form class="form-grid" role="search" aria-label={`Search ${label}`} onSubmit={submit}>
        <div class="field-row">
          <Field label="Status">
            {(p) => (
              <select {...p} value={draft.status} onChange={(e) => setDraft({ ...draft, status: e.currentTarget.value })}>
                {STATUS_CHOICES.map(([value, text]) => (
                  <option key={value} value={value}>
                    {text}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Error code" hint="e.g. ERR_MISSING_FIELD">
            {(p) => <input {...p} type="text" spellcheck={false} value={draft.code} onInput={(e) => setDraft({ ...draft, code: e.currentTarget.value })} />}
          </Field>
          <Field label="Text" hint="In the path, query, message, user agent or IP">
            {(p) => <input {...p} type="text" value={draft.text} onInput={(e) => setDraft({ ...draft, text: e.currentTarget.value })} />}
          </Field>
        </div>
        <div class="actions">
          <button type="submit" class="button small">
            Search
          </button>
          <button type="button" class="button small ghost" onClick={reset} disabled={!filtered && draft === NO_FILTER}>
            Clear
          </button>
        </div>
      </form>
      <Alert message={page.error} />
      <Status message={summary} testId="history-summary" />
      {!data ? (
        page.loading && <Spinner />
      ) : data.entries.length === 0 ? (
        <p class="empty">{filtered ? 'No kept request matches.' : empty}</p>
      ) : (
        <ol class="live-list" aria-label={`${label}, newest first`}>
          {data.entries.map((e, i) => (
            <RequestItem key={`${e.at}-${i}`} entry={e} showToken={showToken} />
          ))}
        </ol>
      )}
    </>
  );
}

function RequestItem({ entry: e, showToken }: { entry: RequestEntry; showToken: boolean }) {
  const state = stateOf(e);
  return (
    <li class={`live-entry ${state}`} data-testid="history-entry" data-state={state}>
      <details>
        <summary>
          <span class="mono time">{formatTime(e.at)}</span>
          <span class={`badge ${state === 'rejected' ? 'error' : state === 'partial' ? 'warn' : 'ok'}`}>
            {e.status} {outcome(e)}
          </span>
          <span class="mono">
            {e.method} {e.path}
          </span>
          {showToken && e.tokenHint && <span class="mono">token {e.tokenHint}</span>}
          {e.message && <span class="error-text">{e.message}</span>}
        </summary>
        <div class="live-detail">
          <dl class="kv">
            <dt>Time</dt>
            <dd class="mono">{e.at}</dd>
            <dt>Endpoint</dt>
            <dd class="mono">{e.endpoint}</dd>
            <dt>Query</dt>
            <dd class="mono">{e.query ?? '—'}</dd>
            <dt>Body bytes</dt>
            <dd>{e.bytes}</dd>
            <dt>Records stored</dt>
            <dd>{e.records}</dd>
            <dt>Client IP</dt>
            <dd class="mono">{e.ip}</dd>
            <dt>User agent</dt>
            <dd>{e.userAgent ?? '—'}</dd>
            {e.code && (
              <>
                <dt>Error</dt>
                <dd>
                  <code>{e.code}</code> {e.message}
                </dd>
              </>
            )}
            {e.tokenHint && (
              <>
                <dt>Token</dt>
                <dd class="mono">{e.tokenHint}</dd>
              </>
            )}
            {e.suppressed ? (
              <>
                <dt>Not kept before this one</dt>
                <dd>{e.suppressed} requests (over the allowance: unknown tokens a minute, or accepted requests a second)</dd>
              </>
            ) : null}
          </dl>
        </div>
      </details>
    </li>
  );
}
