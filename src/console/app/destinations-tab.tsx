import { useState } from 'preact/hooks';
import { useCanEdit } from './access.js';
import { api, messageOf } from './api.js';
import { Alert, ConfirmButton, Spinner, Status } from './components.js';
import { DestinationForm } from './destination-form.js';
import { formatCount, formatDuration } from './format.js';
import { useLoad } from './hooks.js';
import { href } from './router.js';
import type { ArchiveStatus, ConnectorInfo, DestinationView, TestResult } from './types.js';

export function DestinationsTab({ trackerId }: { trackerId: string }) {
  const editor = useCanEdit(trackerId);
  const connectors = useLoad(api.connectors, 'connectors');
  const overview = useLoad(() => api.destinations.overview(trackerId), trackerId, 5000);
  const list = { ...overview, data: overview.data?.destinations };
  const backlog = overview.data?.backlog ?? 0;
  const archive = overview.data?.archive;
  const [status, setStatus] = useState<string | null>(null);
  const [adding, setAdding] = useState(0);

  return (
    <>
      <section class="card" aria-labelledby="destinations-heading">
        <h2 id="destinations-heading">Destinations</h2>
        <Alert message={list.error} />
        <Status message={status} />
        {!list.data ? (
          list.loading && <Spinner />
        ) : list.data.length === 0 ? (
          <p class="empty">
            No destination yet: records accepted for this tracker wait in its backlog
            {backlog > 0 ? ` (${formatCount(backlog)} now)` : ''} and go to the first destination you add below.
          </p>
        ) : (
          <ul class="destination-list">
            {list.data.map((d) => (
              <DestinationItem key={d.id} trackerId={trackerId} destination={d} connectors={connectors.data ?? []} onChanged={list.reload} onStatus={setStatus} editor={editor} />
            ))}
          </ul>
        )}
        {archive && <ArchiveLine archive={archive} />}
      </section>
      {editor && (
        <section class="card" aria-labelledby="add-destination-heading">
          <h2 id="add-destination-heading">Add a destination</h2>
          <Alert message={connectors.error} />
          {connectors.data ? (
            <DestinationForm
              key={adding}
              trackerId={trackerId}
              connectors={connectors.data}
              onSaved={(d) => {
                setStatus(`Destination ${d.id} added.`);
                setAdding((n) => n + 1);
                void list.reload();
              }}
            />
          ) : (
            connectors.loading && <Spinner />
          )}
        </section>
      )}
    </>
  );
}

/** The badge of a destination: disabled, paused, failing, dead letters or healthy. */
export function destinationHealth(d: DestinationView): { label: string; tone: 'ok' | 'warn' | 'error' | 'muted' } {
  if (!d.enabled) return { label: 'disabled', tone: 'muted' };
  if (d.status.paused) return { label: 'paused', tone: 'error' };
  if (d.status.lastError && (!d.status.lastDeliveredAt || d.status.lastError.at > d.status.lastDeliveredAt)) return { label: 'failing', tone: 'error' };
  if (d.status.deadLettered > 0) return { label: 'dead letters', tone: 'warn' };
  return { label: 'healthy', tone: 'ok' };
}

function DestinationItem({ trackerId, destination: d, connectors, onChanged, onStatus, editor }: { trackerId: string; destination: DestinationView; connectors: ConnectorInfo[]; onChanged: () => Promise<void>; onStatus: (s: string) => void; editor: boolean }) {
  const [editing, setEditing] = useState(false);
  const [testing, setTesting] = useState(false);
  const [test, setTest] = useState<TestResult | null>(null);
  const [error, setError] = useState<string | null>(null);
  const h = destinationHealth(d);
  const headingId = `destination-${d.id}`;

  const run = async <T,>(action: () => Promise<T>, done: string | ((result: T) => string)) => {
    setError(null);
    try {
      const result = await action();
      onStatus(typeof done === 'string' ? done : done(result));
      await onChanged();
    } catch (err) {
      setError(messageOf(err));
    }
  };

  const runTest = async () => {
    setTesting(true);
    setTest(null);
    setError(null);
    try {
      setTest(await api.destinations.test(trackerId, d.id));
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setTesting(false);
    }
  };

  return (
    <li class="destination" aria-labelledby={headingId} data-testid={`destination-${d.id}`}>
      <div class="destination-head">
        <h3 id={headingId}>
          {d.id} <span class="muted">{d.type}</span>
        </h3>
        <span class={`badge ${h.tone}`}>{h.label}</span>
      </div>
      <dl class="stats">
        <div>
          <dt>Queued</dt>
          <dd>{formatCount(d.status.queued)}</dd>
        </div>
        {d.status.fullInSeconds.disk !== null && (
          <div>
            <dt>Disk full in</dt>
            <dd title={`backlog growing by ${d.status.growthPerSecond.toFixed(1)} records/s${d.status.fullInSeconds.redisCap !== null ? `; Redis cap in ${formatDuration(d.status.fullInSeconds.redisCap * 1000)}` : ''}`}>{formatDuration(d.status.fullInSeconds.disk * 1000)}</dd>
          </div>
        )}
        {d.status.spooled > 0 && (
          <div>
            <dt>On disk</dt>
            <dd title={`${formatCount(d.status.inRedis)} in Redis; ${formatCount(d.status.spoolBytes)} bytes of disk spool`}>{formatCount(d.status.spooled)}</dd>
          </div>
        )}
        <div>
          <dt>Delivered</dt>
          <dd>{formatCount(d.status.delivered)}</dd>
        </div>
        <div>
          <dt>Dead letters</dt>
          <dd>{formatCount(d.status.deadLettered)}</dd>
        </div>
        <div>
          <dt>Lag</dt>
          <dd>{formatDuration(d.status.lagMs)}</dd>
        </div>
      </dl>
      {d.status.paused && <p class="notice error">Paused: {d.status.paused}</p>}
      {typeof d.status.details?.eventsSpreadsheetUrl === 'string' && (
        <p class="notice">
          The spreadsheet was full: events continue in{' '}
          <a href={d.status.details.eventsSpreadsheetUrl} target="_blank" rel="noreferrer">
            {String(d.status.details.eventsSpreadsheetId)}
          </a>
          ; users and sessions stay. Share it with the people who should see it.
        </p>
      )}
      {d.status.lastError && (
        <p class="last-error">
          Last error ({d.status.lastError.kind}): {d.status.lastError.message}
        </p>
      )}
      <div class="actions">
        <a class="button small" href={href({ page: 'tracker', trackerId, tab: 'destinations', destinationId: d.id })} aria-label={`Last 24 hours of ${d.id}`}>
          Last 24 hours
        </a>
        {editor && (
          <>
            <button type="button" class="button small" onClick={runTest} disabled={testing} aria-label={`Test connection of ${d.id}`}>
              {testing ? 'Testing…' : 'Test connection'}
            </button>
            <button type="button" class="button small" aria-expanded={editing} onClick={() => setEditing((e) => !e)} aria-label={`Edit ${d.id}`}>
              Edit
            </button>
            <button type="button" class="button small" aria-label={`${d.enabled ? 'Disable' : 'Enable'} ${d.id}`} onClick={() => run(() => api.destinations.update(trackerId, d.id, { enabled: !d.enabled }), `Destination ${d.id} ${d.enabled ? 'disabled' : 'enabled'}.`)}>
              {d.enabled ? 'Disable' : 'Enable'}
            </button>
            <ConfirmButton label="Remove" ariaLabel={`Remove ${d.id}`} confirmLabel={`Remove ${d.id} for good`} onConfirm={() => run(() => api.destinations.remove(trackerId, d.id), ({ discarded }) => `Destination ${d.id} removed${discarded.queued + discarded.deadLetters > 0 ? `; ${discarded.queued} queued records and ${discarded.deadLetters} dead letters discarded` : ''}.`)} />
          </>
        )}
      </div>
      <div role="status" class="test-result" data-testid={`test-result-${d.id}`}>
        {test && (test.ok ? <TestOk notes={test.notes} /> : <TestFailed error={test.error} />)}
      </div>
      <Alert message={error} />
      {editing && connectors.length > 0 && (
        <DestinationForm
          trackerId={trackerId}
          connectors={connectors}
          existing={d}
          onCancel={() => setEditing(false)}
          onSaved={async () => {
            setEditing(false);
            onStatus(`Settings of ${d.id} saved.`);
            await onChanged();
          }}
        />
      )}
    </li>
  );
}

function TestOk({ notes }: { notes: string[] | undefined }) {
  return (
    <div class="notice success">
      <p>
        <strong>Connection OK.</strong>
      </p>
      {notes && notes.length > 0 && (
        <ul>
          {notes.map((n) => (
            <li key={n}>{n}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

function TestFailed({ error }: { error: TestResult['error'] }) {
  return (
    <div class="notice error">
      <p>
        <strong>Connection failed</strong>
        {error?.kind ? ` (${error.kind})` : ''}:
      </p>
      <p class="error-text">{error?.message ?? 'no reason given'}</p>
    </div>
  );
}

/** The tracker's archive: the history a destination added later can be sent (docs/history.md). */
function ArchiveLine({ archive: a }: { archive: ArchiveStatus }) {
  if (a.days === 0) return <p class="hint" data-testid="archive-status">No archive: accepted records are not kept for backfills (set Archive days in Settings).</p>;
  const mib = (a.bytes / 1048576).toFixed(1);
  return (
    <p class="hint" data-testid="archive-status">
      Archive: {a.records === 0 ? 'empty so far' : `${mib} MiB on disk${a.oldestDay ? ` since ${a.oldestDay}` : ''}, ${formatCount(a.records)} records archived in all`}; it keeps {a.days} days of accepted records, the history a destination added later can be sent.
      {a.missingThrough && <> History up to {a.missingThrough} was archived on another worker host: give every worker the same ARCHIVE_DIR.</>}
      {a.lastError && <> Last error: {a.lastError}</>}
    </p>
  );
}
