import { useEffect, useRef, useState } from 'preact/hooks';
import { accessApi } from './access-api.js';
import { api, notifyUnauthorized } from './api.js';
import { formatClock, json } from './format.js';
import type { LiveEntry } from './types.js';

/** The list keeps the newest 200 requests; older ones drop off the end. */
const MAX_ENTRIES = 200;
/** Requests arriving in a burst are drawn together, at most every 100 ms. */
const FLUSH_MS = 100;

type Connection = 'connecting' | 'live' | 'reconnecting' | 'closed';

interface Row {
  key: number;
  entry: LiveEntry;
}

/** Every v3 request of the tracker as it arrives (accepted or refused), from the server's event stream. */
export function LiveTab({ trackerId }: { trackerId: string }) {
  const [rows, setRows] = useState<Row[]>([]);
  const [paused, setPaused] = useState(false);
  const [held, setHeld] = useState(0);
  const [received, setReceived] = useState(0);
  const [connection, setConnection] = useState<Connection>('connecting');
  const pending = useRef<Row[]>([]);
  const pausedRef = useRef(false);
  const nextKey = useRef(0);
  const timer = useRef<number | undefined>(undefined);

  const flush = () => {
    timer.current = undefined;
    if (pausedRef.current || pending.current.length === 0) return;
    const fresh = pending.current.reverse();
    pending.current = [];
    setRows((old) => [...fresh, ...old].slice(0, MAX_ENTRIES));
  };

  useEffect(() => {
    setRows([]);
    setReceived(0);
    setConnection('connecting');
    const source = new EventSource(api.liveUrl(trackerId));
    source.addEventListener('ready', () => setConnection('live'));
    source.addEventListener('request', (e) => {
      let entry: LiveEntry;
      try {
        entry = JSON.parse((e as MessageEvent<string>).data) as LiveEntry;
      } catch {
        return;
      }
      pending.current.push({ key: nextKey.current++, entry });
      // While paused, only the newest MAX_ENTRIES are worth holding.
      if (pending.current.length > MAX_ENTRIES) pending.current.splice(0, pending.current.length - MAX_ENTRIES);
      setReceived((n) => n + 1);
      if (pausedRef.current) setHeld(pending.current.length);
      else timer.current ??= window.setTimeout(flush, FLUSH_MS);
    });
    source.onerror = () => {
      if (source.readyState === EventSource.CLOSED) setConnection('closed');
      else setConnection('reconnecting');
      // EventSource hides the status: ask whether the session is still there.
      void accessApi.whoami().then((who) => {
        if (!who) {
          source.close();
          notifyUnauthorized();
        }
      }, () => undefined);
    };
    return () => {
      source.close();
      clearTimeout(timer.current);
      timer.current = undefined;
      pending.current = [];
    };
  }, [trackerId]);

  const togglePause = () => {
    const next = !paused;
    pausedRef.current = next;
    setPaused(next);
    if (!next) {
      setHeld(0);
      flush();
    }
  };

  const clear = () => {
    setRows([]);
    pending.current = [];
    setHeld(0);
  };

  return (
    <section class="card" aria-labelledby="live-heading">
      <div class="live-head">
        <h2 id="live-heading">Live requests</h2>
        <p class={`connection ${connection}`} role="status" data-testid="live-connection">
          {connection === 'live' ? 'Connected' : connection === 'connecting' ? 'Connecting…' : connection === 'reconnecting' ? 'Connection lost, reconnecting…' : 'Disconnected'}
        </p>
      </div>
      <p class="hint">Every request to /v3 for this tracker, newest first (the last {MAX_ENTRIES}). Tokens are shown as [redacted]. Open an entry to see the stored records and the answer.</p>
      <div class="actions">
        <button type="button" class="button small" aria-pressed={paused} onClick={togglePause}>
          {paused ? 'Resume' : 'Pause'}
        </button>
        <button type="button" class="button small" onClick={clear}>
          Clear
        </button>
        <span class="muted">
          {rows.length} shown · {received} received{paused && held > 0 ? ` · ${held} waiting` : ''}
        </span>
      </div>
      {rows.length === 0 ? (
        <p class="empty">{paused ? 'Paused.' : 'Waiting for requests… Send one from the Integration tab.'}</p>
      ) : (
        <ol class="live-list" aria-label="Requests, newest first">
          {rows.map((r) => (
            <LiveItem key={r.key} entry={r.entry} />
          ))}
        </ol>
      )}
    </section>
  );
}

function errorOf(entry: LiveEntry): { code: string; message: string } | null {
  const body = entry.response.body as { error?: { code?: string; message?: string } } | null;
  if (entry.response.status < 400) return null;
  return { code: entry.response.errorCode ?? body?.error?.code ?? `HTTP ${entry.response.status}`, message: body?.error?.message ?? '' };
}

function rejectedInBatch(entry: LiveEntry): number {
  const body = entry.response.body as { rejected?: number } | null;
  return typeof body?.rejected === 'number' ? body.rejected : 0;
}

function summaryName(entry: LiveEntry): string {
  const names = entry.records.map((r) => r.event ?? r.uid ?? r.sid ?? r.id);
  if (names.length === 0) return '';
  return names.length > 3 ? `${names.slice(0, 3).join(', ')} +${names.length - 3}` : names.join(', ');
}

function LiveItem({ entry }: { entry: LiveEntry }) {
  const error = errorOf(entry);
  const partial = rejectedInBatch(entry);
  const duplicates = entry.duplicates ?? 0;
  const state = error ? 'rejected' : partial > 0 ? 'partial' : duplicates > 0 && entry.records.length === 0 ? 'duplicate' : 'accepted';
  const via = entry.response.fixed === 'gif' ? 'pixel' : entry.response.fixed === 'js' ? 'script' : entry.request.method;
  return (
    <li class={`live-entry ${state}`} data-testid="live-entry" data-state={state}>
      <details>
        <summary>
          <span class="mono time">{formatClock(entry.at)}</span>
          <span class={`badge ${error ? 'error' : partial > 0 ? 'warn' : 'ok'}`}>
            {entry.response.status} {error ? `rejected ${error.code}` : partial > 0 ? `${partial} rejected` : 'accepted'}
          </span>
          <span class="mono">
            {via} {entry.request.path}
          </span>
          {entry.records.length > 0 && (
            <span class="record-names">
              {entry.recordCount ?? entry.records.length} {entry.kind ?? 'record'}
              {(entry.recordCount ?? entry.records.length) === 1 ? '' : 's'}: <strong>{summaryName(entry)}</strong>
            </span>
          )}
          {duplicates > 0 && (
            <span class="badge muted" data-testid="live-duplicates">
              {duplicates} duplicate{duplicates === 1 ? '' : 's'}, not stored again
            </span>
          )}
          {error?.message && <span class="error-text">{error.message}</span>}
        </summary>
        <div class="live-detail">
          <h4>Request</h4>
          <dl class="kv">
            <dt>Method and path</dt>
            <dd class="mono">
              {entry.request.method} {entry.request.path}
            </dd>
            <dt>Content type</dt>
            <dd>{entry.request.contentType ?? '—'}</dd>
            <dt>Origin</dt>
            <dd>{entry.request.origin ?? '— (no Origin header)'}</dd>
            <dt>User agent</dt>
            <dd>{entry.request.userAgent ?? '—'}</dd>
          </dl>
          {Object.keys(entry.request.query).length > 0 && (
            <>
              <h4>Query parameters</h4>
              <pre class="json">{json(entry.request.query)}</pre>
            </>
          )}
          <h4>Response {entry.response.status}</h4>
          <pre class="json">{entry.response.fixed ? `(fixed ${entry.response.fixed === 'gif' ? '1×1 GIF' : 'empty script'}${entry.response.errorCode ? `; X-Tributary-Error: ${entry.response.errorCode}` : ''})` : json(entry.response.body)}</pre>
          <h4>
            Normalized records ({entry.recordCount !== undefined && entry.recordCount > entry.records.length ? `first ${entry.records.length} of ${entry.recordCount}` : entry.records.length})
          </h4>
          {entry.records.length > 0 ? <pre class="json">{json(entry.records)}</pre> : <p class="muted">None stored.</p>}
        </div>
      </details>
    </li>
  );
}
