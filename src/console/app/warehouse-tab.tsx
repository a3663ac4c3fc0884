import { useRef, useState } from 'preact/hooks';
import { api, messageOf } from './api.js';
import { Alert, Field, Status } from './components.js';
import { cellText } from './format.js';
import type { QueryResult, Tracker } from './types.js';

export const DEFAULT_SQL = 'SELECT * FROM events ORDER BY _received_at DESC LIMIT 50';

/** SQL on the tracker's local warehouse (DuckDB): tables users, sessions and events. */
export function WarehouseTab({ tracker }: { tracker: Tracker }) {
  const locals = tracker.destinations.filter((d) => d.type === 'local');
  const [sql, setSql] = useState(DEFAULT_SQL);
  const [chosen, setDestination] = useState('');
  const destination = chosen || (locals[0]?.id ?? '');
  const [result, setResult] = useState<QueryResult | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const started = useRef(0);

  const run = async (e?: Event) => {
    e?.preventDefault();
    setBusy(true);
    setError(null);
    setStatus('Running…');
    started.current = performance.now();
    try {
      const r = await api.trackers.query(tracker.id, sql, locals.length > 1 ? destination : undefined);
      setResult(r);
      const total = r.rows.length;
      const shown = r.truncated ? ' (the first ones only; use tributary export for all)' : '';
      setStatus(`${total}${r.truncated ? '+' : ''} row${total === 1 ? '' : 's'}${shown} in ${Math.round(performance.now() - started.current)} ms.`);
    } catch (err) {
      setResult(null);
      setStatus(null);
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) void run(e);
  };

  return (
    <>
      <section class="card" aria-labelledby="warehouse-heading">
        <h2 id="warehouse-heading">Warehouse</h2>
        <p class="hint">
          Read-only SQL (DuckDB) on the local warehouse: tables <code>users</code>, <code>sessions</code>, <code>events</code>, with the reserved columns <code>_id</code>, <code>_uid</code>, <code>_sid</code>, <code>_event</code>, <code>_event_at</code>, <code>_received_at</code>, then <code>_context</code>, <code>_properties</code> and one column per property.
        </p>
        {locals.length === 0 && <p class="notice">This tracker has no local destination: add one in Destinations to query its data here.</p>}
        <form onSubmit={run} noValidate>
          {locals.length > 1 && (
            <Field label="Local destination">
              {(p) => (
                <select {...p} value={destination} onChange={(e) => setDestination(e.currentTarget.value)}>
                  {locals.map((d) => (
                    <option key={d.id} value={d.id}>
                      {d.id}
                    </option>
                  ))}
                </select>
              )}
            </Field>
          )}
          <Field label="SQL" hint="Ctrl+Enter runs the query.">
            {(p) => <textarea {...p} class="mono sql" rows={5} spellcheck={false} value={sql} onInput={(e) => setSql(e.currentTarget.value)} onKeyDown={onKeyDown} />}
          </Field>
          <div class="actions">
            <button class="button primary" type="submit" disabled={busy || sql.trim() === ''}>
              {busy ? 'Running…' : 'Run query'}
            </button>
            <Status message={status} testId="query-status" />
          </div>
        </form>
        <Alert message={error} testId="query-error" />
      </section>
      {result && <Results result={result} />}
    </>
  );
}

function Results({ result }: { result: QueryResult }) {
  return (
    <section class="card" aria-labelledby="results-heading">
      <h2 id="results-heading">Results</h2>
      {result.columns.length === 0 ? (
        <p class="empty">The statement returned no columns.</p>
      ) : (
        <div class="table-wrap results">
          <table data-testid="query-results">
            <thead>
              <tr>
                {result.columns.map((c, i) => (
                  <th key={i} scope="col">
                    {c}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {result.rows.map((row, i) => (
                <tr key={i}>
                  {row.map((cell, j) => (
                    <td key={j} class={cell === null ? 'null' : undefined}>
                      {cellText(cell)}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {result.rows.length === 0 && result.columns.length > 0 && <p class="empty">No rows.</p>}
    </section>
  );
}
